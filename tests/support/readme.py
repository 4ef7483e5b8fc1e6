"""The README as tests read it: its code blocks and its steps, word for word.

Tests that run what the README tells a user to do (the torch.distributed and Horovod
jobs) take their scripts from it with :func:`readme_block` and check with
:func:`assert_readme_has` that the commands they run are written there as they run
them, so that the README and the tests cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Iterable

from .constants import REPO

README = REPO / "README.md"


def readme_block(language: str, first_line: str) -> str:
    """The README's fenced ``language`` block whose first line is ``first_line``
    (e.g. ``# allreduce.py``), that line included."""
    text = README.read_text()
    begin = text.index(f"```{language}\n{first_line}\n") + len(f"```{language}\n")
    return text[begin : text.index("```", begin)]


def assert_readme_has(steps: Iterable[str]) -> None:
    """Fail naming the first of ``steps`` (exact text) that the README lacks."""
    text = README.read_text()
    for step in steps:
        assert step in text, f"the README no longer says:\n{step}"
