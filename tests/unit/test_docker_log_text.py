"""Docker's multiplexed log frames taken apart per network read (``log_text``), without
Docker: frames split anywhere across reads, UTF-8 split inside a character, TTY logs."""

from __future__ import annotations

import asyncio
import struct
from collections.abc import AsyncIterator
from typing import Any

from jupyter_cluster.engine.agents.docker.logs import log_text


class _Content:
    def __init__(self, reads: list[bytes]) -> None:
        self.reads = reads

    async def iter_any(self) -> AsyncIterator[bytes]:
        for data in self.reads:
            yield data


class _Response:
    def __init__(self, reads: list[bytes]) -> None:
        self.content = _Content(reads)


def frame(stream: int, payload: bytes) -> bytes:
    """One frame as Docker sends it: stream, three zero bytes, length, payload."""
    return struct.pack(">BxxxL", stream, len(payload)) + payload


def text_of(reads: list[bytes], tty: bool = False) -> list[str]:
    async def collect() -> list[str]:
        response: Any = _Response(reads)
        return [piece async for piece in log_text(response, tty)]

    return asyncio.run(collect())


def test_frames_split_anywhere_give_the_same_text() -> None:
    payloads = [b"one\n", "d\u00e9j\u00e0 vu\n".encode(), b"", b"x" * 20000 + b"\n", b"end\n"]
    data = b"".join(frame(1 + i % 2, p) for i, p in enumerate(payloads))
    expected = b"".join(payloads).decode()
    assert "".join(text_of([data])) == expected
    for size in (1, 3, 7, 8, 9, 1000):
        reads = [data[i : i + size] for i in range(0, len(data), size)]
        assert "".join(text_of(reads)) == expected


def test_one_piece_per_read_not_per_frame() -> None:
    data = b"".join(frame(1, f"{i}\n".encode()) for i in range(1000))
    assert text_of([data]) == ["".join(f"{i}\n" for i in range(1000))]


def test_a_tty_log_is_raw_text() -> None:
    assert "".join(text_of([b"a\r\n", b"b\xc3", b"\xa9\n"], tty=True)) == "a\r\nb\u00e9\n"


class _Transport:
    """Records what the reader asks of the connection (pause, resume)."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.reading = True

    def is_reading(self) -> bool:
        return self.reading

    def is_closing(self) -> bool:
        return False

    def pause_reading(self) -> None:
        self.calls.append("pause")
        self.reading = False

    def resume_reading(self) -> None:
        self.calls.append("resume")
        self.reading = True


class _Connection:
    """aiohttp's connection: its transport, and its protocol (paused and resumed
    through it; here the same recorder)."""

    def __init__(self, transport: _Transport) -> None:
        self.transport = self.protocol = transport


def test_the_pace_gathers_only_at_the_live_edge() -> None:
    """Behind at first; caught up once a read waited; behind again when what came
    during a gather is more than a trickle, or a read is large."""
    from jupyter_cluster.engine.agents.docker.logs import BEHIND, CAUGHT_UP, WAITED, _Pace

    pace = _Pace()
    at_once, waited = 0.0, WAITED * 2
    assert not pace.caught_up(at_once, 100)  # a log's tail, read at once
    assert pace.caught_up(waited, 100)  # it had to wait: the live edge
    pace.gathered = True
    assert pace.caught_up(at_once, BEHIND - 1)  # a trickle came during the gather
    pace.gathered = True
    assert not pace.caught_up(at_once, BEHIND)  # more than a trickle: read on at once
    assert not pace.caught_up(at_once, BEHIND)  # still behind while reads come at once
    assert pace.caught_up(waited, 10)
    assert not pace.caught_up(waited, CAUGHT_UP)  # a large read is a backlog


class _Waiting(_Content):
    """Reads of which some wait (``None`` in the list: a pause before the next)."""

    def __init__(self, reads: list[bytes | None], wait: float) -> None:
        super().__init__([r for r in reads if r is not None])
        self.plan, self.wait = reads, wait

    async def iter_any(self) -> AsyncIterator[bytes]:
        for data in self.plan:
            if data is None:
                await asyncio.sleep(self.wait)
            else:
                yield data


def test_a_follower_gathers_with_reading_paused_once_caught_up(monkeypatch: Any) -> None:
    """A backlog is read on at once; a read that waited is followed by a gather with
    the connection's reading paused, then resumed."""
    from jupyter_cluster.engine.agents.docker import logs

    # reads taken at once never look as if they waited, however loaded the machine
    monkeypatch.setattr(logs, "WAITED", 0.3)
    transport = _Transport()
    reads: list[bytes | None] = [frame(1, b"x" * 40000 + b"\n"), frame(1, b"a\n")]
    reads += [None, frame(1, b"b\n"), frame(1, b"c\n")]
    seen: list[str] = []

    async def collect() -> None:
        response: Any = _Response([])
        response.content = _Waiting(reads, 0.4)
        response.connection = _Connection(transport)
        async for piece in log_text(response, False, gather=0.001):
            seen.append(f"{len(piece)}:{','.join(transport.calls)}")

    asyncio.run(collect())
    # the backlog and the tail read at once came without a pause; "b\n" waited, so a
    # gather (pause, resume) came before "c\n", taken at once and small: one more
    assert seen == ["40001:", "2:", "2:", "2:pause,resume"]
    assert transport.calls == ["pause", "resume"] * 2


def test_without_gather_nothing_pauses() -> None:
    transport = _Transport()

    async def collect() -> list[str]:
        response: Any = _Response([frame(1, b"a\n"), frame(1, b"b\n")])
        response.connection = _Connection(transport)
        return [piece async for piece in log_text(response, False)]

    assert asyncio.run(collect()) == ["a\n", "b\n"]
    assert transport.calls == []
