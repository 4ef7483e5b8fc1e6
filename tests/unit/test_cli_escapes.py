"""Text a container controls never drives the terminal of whoever reads it with the
CLI (an admin, in team mode): ``show`` prints a bootstrap command without escape
sequences, and ``logs`` takes them out of lines written to a terminal unless
``--raw`` (security review X12). Piped output is left as it is."""

from __future__ import annotations

import argparse
import asyncio
import io
from collections.abc import AsyncIterator
from typing import Any

import pytest

from jupyter_cluster.cli import container_commands
from jupyter_cluster.cli.format import session_details
from jupyter_cluster.core.models import LaunchSpec, Session
from jupyter_cluster.core.naming import plan_containers

HOSTILE = "printf '\x1b[31mRED\x1b]0;owned\x07'\n"
SID = "6f1c1e52-0000-4000-8000-000000000001"


class Screen(io.StringIO):
    """A stdout that says whether it is a terminal."""

    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


class LogEngine:
    """Only what ``logs`` uses of an engine: lines a container wrote."""

    async def logs(self, *args: Any, **kwargs: Any) -> AsyncIterator[str]:
        for line in ("plain line\n", "\x1b[31mred\x1b[0m \x1b]0;title\x07done\n"):
            yield line


def test_show_prints_a_bootstrap_without_escapes() -> None:
    spec = LaunchSpec.create(image="jupyter-cluster/kernel", size=1, bootstrap=HOSTILE)
    text = session_details(Session(id=SID, spec=spec, containers=plan_containers(SID, 1)))
    assert "\x1b" not in text and "\x07" not in text
    assert "bootstrap printf '[31mRED" not in text and "RED" in text


CASES = [(True, False, False), (True, True, True), (False, False, True)]


@pytest.mark.parametrize(("tty", "raw", "escaped"), CASES)
def test_logs_take_escapes_out_on_a_terminal_unless_raw(
    monkeypatch: pytest.MonkeyPatch, tty: bool, raw: bool, escaped: bool
) -> None:
    screen = Screen(tty)
    monkeypatch.setattr("sys.stdout", screen)
    args = argparse.Namespace(session="s", host="main1", tail=None, follow=False, raw=raw)
    asyncio.run(container_commands.logs(LogEngine(), args))  # type: ignore[arg-type]
    out = screen.getvalue()
    assert ("\x1b" in out) is escaped
    assert out.splitlines()[0] == "plain line" and "done" in out.splitlines()[1]
