"""``jupyter cluster logs`` writes a long log in big pieces, yet shows every line at once
when it follows (issue 27, item 6).

Lines that arrive together (one network read) are written together, encoded once to
stdout's binary buffer; whatever has arrived is written before the reader waits
for more, so a followed log never holds a line back.
"""

from __future__ import annotations

import argparse
import asyncio
import io
from collections.abc import AsyncIterator
from typing import Any

import pytest

from jupyter_cluster.cli import container_commands

BURSTS, LINES = 5, 2000


class Recorder(io.BytesIO):
    """A binary stdout that counts its writes."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, data: Any) -> int:
        self.writes += 1
        return super().write(data)


class Bursts:
    """An engine whose log comes in bursts of lines, waiting between them; it notes
    what stdout held each time it waited."""

    def __init__(self, out: Recorder) -> None:
        self.out = out
        self.seen_when_waiting: list[int] = []

    async def logs(self, *args: Any, **kwargs: Any) -> AsyncIterator[str]:
        for burst in range(BURSTS):
            for i in range(LINES):
                yield f"{burst}:{i} é\n"
            await asyncio.sleep(0.01)  # the reader waits for the network
            self.seen_when_waiting.append(self.out.getvalue().count(b"\n"))


def test_a_long_log_is_written_in_few_pieces_and_shown_before_each_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    raw = Recorder()
    stdout = io.TextIOWrapper(raw, encoding="utf-8", write_through=False)
    monkeypatch.setattr("sys.stdout", stdout)
    engine = Bursts(raw)
    args = argparse.Namespace(session="s", host="main1", tail=None, follow=True, raw=False)
    asyncio.run(container_commands.logs(engine, args))  # type: ignore[arg-type]
    expected = "".join(f"{b}:{i} é\n" for b in range(BURSTS) for i in range(LINES))
    assert raw.getvalue().decode() == expected
    assert engine.seen_when_waiting == [LINES * (b + 1) for b in range(BURSTS)]
    assert raw.writes <= BURSTS * 2, raw.writes  # not one write per line


def test_past_the_limit_lines_are_written_without_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    raw = Recorder()
    stdout = io.TextIOWrapper(raw, encoding="utf-8")
    monkeypatch.setattr("sys.stdout", stdout)
    sizes: list[int] = []

    class Flood:
        async def logs(self, *args: Any, **kwargs: Any) -> AsyncIterator[str]:
            for _ in range(3 * container_commands.BatchedOutput.LIMIT // 100):
                yield "x" * 99 + "\n"
                sizes.append(len(raw.getvalue()))

    args = argparse.Namespace(session="s", host="main1", tail=None, follow=False, raw=True)
    asyncio.run(container_commands.logs(Flood(), args))  # type: ignore[arg-type]
    assert len(raw.getvalue()) == 3 * container_commands.BatchedOutput.LIMIT // 100 * 100
    assert max(sizes) >= 2 * container_commands.BatchedOutput.LIMIT  # written while reading
