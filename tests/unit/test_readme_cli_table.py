"""Every ``jupyter cluster`` command has a row in the README's command table.

The table under "CLI quick start" is where a new user looks a command up; commands
added later (``wait``, ``profile``, ``limits``…) had been documented only in their
own sections. The parser is the list of commands.
"""

from __future__ import annotations

import argparse
import re

from jupyter_cluster.cli.parser import build_parser
from tests.support.readme import README


def commands() -> list[str]:
    parser = build_parser()
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return sorted(sub.choices)


def table_rows() -> list[str]:
    text = README.read_text()
    begin = text.index("| command | what it does |")
    end = text.index("\n\n", begin)
    return text[begin:end].splitlines()[2:]


def test_every_command_has_a_row() -> None:
    named = set()
    for row in table_rows():
        first_cell = row.split(" | ")[0]
        named.update(re.findall(r"`([a-z][a-z-]*)", first_cell))
    assert [c for c in commands() if c not in named] == []
