"""The README as tests read it: its code blocks and its steps, word for word.

Tests that run what the README tells a user to do (the quick start, web apps, batch
jobs, the torch.distributed and Horovod jobs) take their scripts from it with
:func:`readme_block`, its commands with :func:`commands_of`, run them with
:func:`in_bash`, and check with :func:`assert_readme_has` that the commands they run
are written there as they run them, so that the README and the tests cannot drift
apart.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable
from pathlib import Path

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


def commands_of(block: str) -> list[str]:
    """A shell block's commands as a user types them: lines continued with a
    backslash joined, comments and blank lines dropped."""
    joined = re.sub(r"\s*\\\n\s*", " ", block)
    lines = (re.sub(r"(^|\s+)# .*$", "", line) for line in joined.splitlines())
    return [line.strip() for line in lines if line.strip()]


def bash_argv(line: str) -> list[str]:
    """bash running ``line`` after the README's ``source .venv/bin/activate`` (the
    clone's venv, by its full path, so the line may run in any folder)."""
    activate = REPO / ".venv" / "bin" / "activate"
    assert activate.is_file(), "make setup makes .venv"
    return ["bash", "-c", f"source {activate}\n{line}"]


def in_bash(line: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``line`` as :func:`bash_argv` has it, in ``cwd``, to the end."""
    return subprocess.run(
        bash_argv(line), env=env, cwd=cwd, capture_output=True, text=True, timeout=600
    )


def ok_in_bash(line: str, env: dict[str, str], cwd: Path) -> str:
    """Run ``line`` as :func:`in_bash` does and assert what every README step must
    do: exit 0, with no warning and no traceback on stderr; its stdout."""
    done = in_bash(line, env, cwd)
    assert done.returncode == 0, (line, done)
    assert "Warning" not in done.stderr and "Traceback" not in done.stderr, (line, done.stderr)
    return done.stdout
