"""within: a bounded wait (every Docker call's) never swallows its caller's cancel.

``asyncio.wait_for`` on Python < 3.12 returns normally when the caller is cancelled
in the same moment the awaited call completes. A launch cancelled as Docker answered
its ``start`` went on to wait for main1's bootstrap, and a stopping server waited a
minute for it (found by ``tests/server/test_server_stop.py`` under load).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

import jupyter_cluster
from jupyter_cluster.asyncwait import _within_by_wait, within
from jupyter_cluster.engine.agents.base import AgentConfig
from jupyter_cluster.engine.agents.docker.connection import DockerConnection

Bounded = Callable[[Awaitable[Any], float], Awaitable[Any]]
#: Both ways :func:`within` waits: asyncio.timeout (3.11+) and asyncio.wait (3.10).
WAYS: dict[str, Bounded] = {"timeout": within, "wait": _within_by_wait}


@pytest.mark.parametrize("way", sorted(WAYS))
async def test_the_result_in_time_and_a_timeout_that_cancels_the_call(way: str) -> None:
    bounded = WAYS[way]

    async def answer() -> int:
        await asyncio.sleep(0.01)
        return 7

    assert await bounded(answer(), 5) == 7
    ended: list[str] = []

    async def slow() -> None:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            ended.append("cancelled")
            raise

    with pytest.raises(asyncio.TimeoutError):
        await bounded(slow(), 0.01)
    assert ended == ["cancelled"]


async def test_no_timeout_waits_as_long_as_it_takes() -> None:
    async def answer() -> str:
        await asyncio.sleep(0.02)
        return "done"

    assert await within(answer(), None) == "done"


@pytest.mark.parametrize("way", sorted(WAYS))
@pytest.mark.parametrize("yields", range(4))
async def test_a_cancel_as_the_call_completes_is_not_swallowed(way: str, yields: int) -> None:
    bounded = WAYS[way]
    answer: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    went_on = False

    async def call() -> str:
        return await answer

    async def caller() -> None:  # as a launch: a Docker call, then a long wait
        nonlocal went_on
        await bounded(call(), 30)
        went_on = True
        await asyncio.sleep(30)

    task = asyncio.ensure_future(caller())
    for _ in range(3):
        await asyncio.sleep(0)
    answer.set_result("started")
    for _ in range(yields):
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 2)
    if yields == 0:  # cancelled in the very moment the answer came
        assert not went_on


@pytest.mark.parametrize("yields", range(3))
async def test_a_docker_call_answered_as_its_caller_is_cancelled_still_cancels(
    yields: int,
) -> None:
    connection = DockerConnection(AgentConfig())
    answer: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    went_on = False

    async def request() -> None:  # what aiodocker's container.start() is to the call
        await answer

    async def start_then_wait() -> None:
        nonlocal went_on
        await connection.call("starting container main1", request())
        went_on = True
        await asyncio.sleep(30)  # the launch's wait for main1's start-up

    task = asyncio.ensure_future(start_then_wait())
    for _ in range(3):
        await asyncio.sleep(0)
    answer.set_result(None)
    for _ in range(yields):
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 2)
    if yields == 0:
        assert not went_on


def test_no_module_of_the_package_waits_with_asyncio_wait_for() -> None:
    package = Path(jupyter_cluster.__file__).parent
    users = [
        str(path.relative_to(package))
        for path in sorted(package.rglob("*.py"))
        if "asyncio.wait_for(" in path.read_text()
    ]
    assert users == [], f"use asyncwait.within instead of asyncio.wait_for in {users}"
