"""The line Ctrl-C ends a ``jupyter cluster`` command with says what became of it.

It used to say "the launch was cancelled" after any command: after ``logs --follow``
or ``top``, where there was no launch, and after ``wait`` on a batch job, whose job
goes on. See ``jupyter_cluster/cli/main.py`` (``interrupted``).
"""

from __future__ import annotations

import argparse

import pytest

from jupyter_cluster.cli.main import interrupted
from jupyter_cluster.cli.parser import build_parser


def parsed(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(argv)


def test_a_launch_driven_here_was_cancelled() -> None:
    assert interrupted(parsed("launch", "--size", "2")) == (
        "interrupted; the launch was cancelled and what it had made removed"
    )


def test_a_session_handed_to_a_driver_goes_on_and_the_line_says_how_to_reach_it() -> None:
    args = parsed("launch", "--command", "python3 train.py", "--name", "train")
    args.goes_on = "train"  # set by the command once the driver has it
    said = interrupted(args)
    assert said.startswith("interrupted; session train goes on without this command")
    assert "'jupyter cluster wait train'" in said and "'jupyter cluster rm train'" in said


@pytest.mark.parametrize(
    "argv",
    [
        ("logs", "demo", "sub1", "--follow"),
        ("top", "demo"),
        ("exec", "demo", "--", "sleep", "9"),
        ("launch", "--size", "2", "--dry-run"),  # it made nothing to cancel
    ],
)
def test_other_commands_say_only_interrupted(argv: tuple[str, ...]) -> None:
    assert interrupted(parsed(*argv)) == "interrupted"
