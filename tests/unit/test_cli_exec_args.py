"""How ``jupyter cluster exec`` reads what follows the session: HOST, --all, COMMAND;
and ``logs``' HOST, main1 when not given, like ``exec``'s and ``ssh``'s.

The parser and :func:`_exec_command` alone (no engine): main1 when no HOST is given,
as ``ssh`` does; a word before ``--`` is the HOST even when it names no container
(the engine then refuses it as unknown, rather than running it as a command); one
word of command is a command line for the container's shell.
"""

from __future__ import annotations

import pytest

from jupyter_cluster.cli.container_commands import _exec_command
from jupyter_cluster.cli.parser import build_parser
from jupyter_cluster.errors import InvalidRequest

#: What one word of command runs as (core.ssh_client.shell_words).
SH = ["sh", "-c"]


def target(*argv: str) -> tuple[bool, str | None, list[str]]:
    args = build_parser().parse_args(["exec", *argv])
    command = _exec_command(args)
    return args.all, args.host, command


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (("S", "--", "sh", "-c", "x"), (False, "main1", ["sh", "-c", "x"])),
        (("S", "hostname"), (False, "main1", [*SH, "hostname"])),
        (("S", "sub1", "--", "env"), (False, "sub1", [*SH, "env"])),
        (("S", "sub12", "env"), (False, "sub12", [*SH, "env"])),
        (("S", "mian1", "--", "hostname"), (False, "mian1", [*SH, "hostname"])),
        (("S", "main1", "--", "sh", "-c", "a -- b"), (False, "main1", ["sh", "-c", "a -- b"])),
        # one word: a command line for the container's shell, as ssh and pdsh take one
        (("S", "--", "ls / | wc -l"), (False, "main1", [*SH, "ls / | wc -l"])),
        (("S", "--all", "--", "echo $HOSTNAME"), (True, None, [*SH, "echo $HOSTNAME"])),
        (("S", "--all", "--", "true"), (True, None, [*SH, "true"])),
        (("--all", "S", "--", "true"), (True, None, [*SH, "true"])),
        (("S", "--all", "true"), (True, None, [*SH, "true"])),
        (
            ("--all", "S", "--", "sh", "-c", "x", "--", "y"),
            (True, None, ["sh", "-c", "x", "--", "y"]),
        ),
    ],
)
def test_host_and_command(argv: tuple[str, ...], expected: tuple[bool, str, list[str]]) -> None:
    assert target(*argv) == expected


@pytest.mark.parametrize(
    ("argv", "field", "words"),
    [
        (("--all", "S", "main1", "--", "true"), "host", "either a HOST or --all"),
        (("S", "--all", "main1", "--", "true"), "host", "either a HOST or --all"),
        (("S",), "cmd", "give a command"),
        (("S", "main1"), "cmd", "give a command"),
        (("S", "sub1", "--"), "cmd", "give a command"),
        (("S", "--all"), "cmd", "give a command"),
    ],
)
def test_what_is_refused_says_what_to_give(argv: tuple[str, ...], field: str, words: str) -> None:
    with pytest.raises(InvalidRequest, match=words) as refused:
        target(*argv)
    assert refused.value.field == field


def test_logs_without_a_host_reads_main1() -> None:
    assert build_parser().parse_args(["logs", "S"]).host == "main1"
    given = build_parser().parse_args(["logs", "S", "sub2", "--tail", "5"])
    assert (given.host, given.tail) == ("sub2", 5)
