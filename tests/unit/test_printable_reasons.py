"""A container's own log text reaches status reasons without terminal escapes (review
I6): a bootstrap that prints escape sequences and fails leaves a reason that
``ls``/``show`` print as plain text, and the CLI also cleans reasons from elsewhere."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from jupyter_cluster.cli.format import session_details, sessions_table
from jupyter_cluster.core.lines import printable
from jupyter_cluster.core.naming import FAILED_MARKERS
from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.engine.agents.fake import DEFAULT_IMAGE, FakeAgent
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.errors import LaunchFailed

HOSTILE = "\x1b[2J\x1b[H\x1b]0;owned\x07\x1b(0boot\x9b31mstrap\x00 says\x08 hi\r"


@pytest.mark.parametrize(
    ("text", "clean"),
    [
        ("plain text, tabs\tand\nnewlines", "plain text, tabs\tand\nnewlines"),
        ("\x1b[1;31mred\x1b[0m", "red"),
        ("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"),
        (HOSTILE, "bootstrap says hi"),
        ("ünïcode ✓ stays", "ünïcode ✓ stays"),
    ],
)
def test_printable_removes_escapes_and_control_characters(text: str, clean: str) -> None:
    assert printable(text) == clean


class HostileAgent(FakeAgent):
    """Containers print escape sequences, then fail their start-up."""

    async def start_container(self, container_id: str) -> None:
        await super().start_container(container_id)
        self.emit(container_id, HOSTILE)
        asyncio.get_running_loop().call_later(0.05, self.emit, container_id, FAILED_MARKERS[0])


async def test_a_failed_launch_quotes_its_log_without_escapes(tmp_path: Path) -> None:
    manager = ClusterManager(
        db_path=str(tmp_path / "cluster.db"),
        data_root=str(tmp_path / "folders"),
        agent_factory=lambda config: HostileAgent("local"),
    )
    with pytest.raises(LaunchFailed) as failed:
        await manager.launch(manager.make_spec(image=DEFAULT_IMAGE, size=2))
    assert "bootstrap says hi" in str(failed.value)
    (session,) = await manager.list(include_ended=True)
    assert session.status in (SessionStatus.ERROR, SessionStatus.TERMINATED)
    assert "bootstrap says hi" in session.status_reason, session.status_reason
    assert not any(ord(ch) < 32 and ch not in "\n\t" for ch in session.status_reason)
    assert "\x1b" not in session.status_reason and "\x9b" not in session.status_reason
    await manager.close()


async def test_the_cli_prints_any_reason_as_plain_text(tmp_path: Path) -> None:
    manager = ClusterManager(
        db_path=str(tmp_path / "cluster.db"),
        data_root=str(tmp_path / "folders"),
        agent_factory=lambda config: FakeAgent("local", ready_on_start=True),
    )
    session = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE, size=2))
    manager.store.set_status(session.id, SessionStatus.RUNNING_DEGRADED, HOSTILE)
    manager.store.update_container(session.id, "sub1", status_reason=HOSTILE)
    (stored,) = await manager.list()
    for text in (session_details(stored), sessions_table([stored])):
        assert "bootstrap says hi" in text
        assert "\x1b" not in text and "\x9b" not in text and "\r" not in text
    await manager.terminate(session.id)
    await manager.close()
