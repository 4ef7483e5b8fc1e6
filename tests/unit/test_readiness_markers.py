"""The start-up script's markers are seen even when a bootstrap command's output did
not end its line, so the script's own line is glued to it in the container's log
(``engine/launch/readiness.py``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from jupyter_cluster.core.naming import READY_MARKER
from jupyter_cluster.engine.launch.readiness import BOOTSTRAP_MARKER, says, wait_ready
from jupyter_cluster.errors import LaunchFailed


class LogOnly:
    """An agent whose container log is ``lines`` (then nothing more)."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines

    async def logs(self, container_id: str, **how: Any) -> AsyncIterator[str]:
        for line in self.lines:
            yield line
        if how.get("follow"):
            await asyncio.sleep(3600)


def test_a_marker_glued_to_unfinished_output_is_seen() -> None:
    assert says(READY_MARKER + "\n", READY_MARKER)
    assert says("no newline here" + READY_MARKER + "\n", READY_MARKER)
    assert not says("jupyter-cluster: running the bootstrap command\n", READY_MARKER)


async def test_wait_ready_returns_on_a_glued_ready_line() -> None:
    began: list[bool] = []
    agent: Any = LogOnly([BOOTSTRAP_MARKER + "\n", "partial" + READY_MARKER + "\n"])
    await asyncio.wait_for(
        wait_ready(agent, "c1", "main1", 5, on_bootstrap=lambda: began.append(True)), 2
    )
    assert began == [True]


async def test_wait_ready_fails_on_a_glued_failure_line() -> None:
    agent: Any = LogOnly(["partialjupyter-cluster: bootstrap failed with exit code 4\n"])
    with pytest.raises(LaunchFailed, match="exit code 4"):
        await asyncio.wait_for(wait_ready(agent, "c1", "main1", 5), 2)
