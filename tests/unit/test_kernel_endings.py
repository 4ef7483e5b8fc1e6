"""Ending a shut-down kernel's session (``provisioning.endings``): the kernel's own
exit comes before its containers are removed, in the foreground (a script) and in
the background (a server's ``shutdown_kernel`` returns first); a kernel that never
exits is given its grace, then the removal ends it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from jupyter_cluster.provisioning import endings


@pytest.fixture(autouse=True)
def server_running() -> None:
    """As in a running server (a server stopped earlier in this process ends
    sessions in the foreground until the next one starts)."""
    endings.server_started()


class FakeEngine:
    """Records what happens, in order."""

    def __init__(self, events: list[str]) -> None:
        self.events = events

    def mark_ending(self, session_id: str) -> bool:
        self.events.append("marked")
        return True

    async def terminate(self, session_id: str, reason: str = "") -> None:
        self.events.append("removed")

    async def close(self) -> None:
        self.events.append("engine closed")


class FakeProcess:
    """A kernel process that ends when ``exit`` is set (or never)."""

    def __init__(self, events: list[str]) -> None:
        self.events = events
        self.exit = asyncio.Event()

    async def poll(self) -> int | None:
        return 0 if self.exit.is_set() else None

    async def wait(self) -> int:
        await self.exit.wait()
        self.events.append("kernel exited")
        return 0

    async def close(self) -> None:
        self.events.append("process closed")


class FakeLink:
    def __init__(self, events: list[str]) -> None:
        self.events = events

    async def close(self) -> None:
        self.events.append("link closed")


def parts(grace: float = 5.0) -> tuple[list[str], Any, FakeProcess, Any]:
    events: list[str] = []
    process = FakeProcess(events)
    link: Any = FakeLink(events)

    def ended() -> Any:
        return endings.kernel_ended(process, link, grace)  # type: ignore[arg-type]

    return events, FakeEngine(events), process, ended


async def test_in_the_background_shutdown_returns_first_and_removal_waits_for_the_kernel() -> None:
    events, engine, process, ended = parts()
    await endings.end_session(engine, "s1", True, ended)
    assert events == ["marked"]  # returned while the kernel still runs
    await asyncio.sleep(0.05)
    assert "removed" not in events  # nothing removed under a kernel that is exiting
    process.exit.set()
    await endings.wait_for_endings()
    assert events == [
        "marked",
        "kernel exited",
        "process closed",
        "link closed",
        "removed",
        "engine closed",
    ]


async def test_in_the_foreground_the_kernel_ends_before_the_removal() -> None:
    events, engine, process, ended = parts()
    process.exit.set()
    await endings.end_session(engine, "s1", False, ended)
    assert events == ["process closed", "link closed", "removed", "engine closed"]


async def test_a_kernel_that_never_exits_is_given_its_grace_then_removed() -> None:
    events, engine, _, ended = parts(grace=0.1)
    await endings.end_session(engine, "s1", True, ended)
    await asyncio.wait_for(endings.wait_for_endings(), 5)
    assert events == ["marked", "process closed", "link closed", "removed", "engine closed"]
