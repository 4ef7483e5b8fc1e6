"""Per-phase timings of a launch (core.timings) with the fake agent: every phase is
recorded, in order, never negative, logged at debug level, kept in the session's
JSON and read back; a failed launch keeps the phases it got through."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from jupyter_cluster.cli.format import session_details
from jupyter_cluster.core.models import Session
from jupyter_cluster.core.naming import READY_MARKER
from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.core.timings import PHASES, LaunchClock, elapsed_until_running, ordered
from jupyter_cluster.engine.agents.fake import DEFAULT_IMAGE, FakeAgent
from jupyter_cluster.engine.launch.readiness import BOOTSTRAP_MARKER
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.errors import AgentError, LaunchFailed

LAUNCH_PHASES = list(PHASES[:-1])  # kernel_ready needs a kernel: see the integration test
BOOTSTRAP_SECONDS = 0.2


class BootstrappingAgent(FakeAgent):
    """Containers log the bootstrap line at start, and are ready a moment later."""

    async def start_container(self, container_id: str) -> None:
        """Start, say the bootstrap command runs, then ready after BOOTSTRAP_SECONDS."""
        await super().start_container(container_id)
        self.emit(container_id, BOOTSTRAP_MARKER)
        loop = asyncio.get_running_loop()
        loop.call_later(BOOTSTRAP_SECONDS, self.emit, container_id, READY_MARKER)


def make_manager(tmp_path: Path, agent: FakeAgent) -> ClusterManager:
    return ClusterManager(
        db_path=str(tmp_path / "cluster.db"),
        data_root=str(tmp_path / "folders"),
        agent_factory=lambda config: agent,
    )


async def test_every_phase_is_recorded_in_order_and_kept(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    manager = make_manager(tmp_path, FakeAgent("local", ready_on_start=True))
    caplog.set_level(logging.DEBUG, logger="jupyter_cluster")
    session = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE, size=3, cpu=0.5))
    assert session.status is SessionStatus.RUNNING
    assert list(session.timings) == LAUNCH_PHASES
    assert all(v >= 0 for v in session.timings.values())
    logged = [
        r.args[1]  # type: ignore[index]
        for r in caplog.records
        if r.levelno == logging.DEBUG and r.getMessage().startswith(f"session {session.id}: phase")
    ]
    assert logged == LAUNCH_PHASES
    public = session.to_dict()
    assert list(public["timings"]) == LAUNCH_PHASES
    assert Session.from_public(public) == session
    stored = manager.store.get(session.id)
    assert stored is not None and stored.timings == session.timings
    assert Session.from_record(stored.to_record()).timings == session.timings
    text = session_details(session)
    assert "timings   queue " in text and "bootstrap" in text and "total" in text
    await manager.terminate(session.id)
    await manager.close()


async def test_bootstrap_time_is_its_own_phase(tmp_path: Path) -> None:
    manager = make_manager(tmp_path, BootstrappingAgent("local"))
    spec = manager.make_spec(image=DEFAULT_IMAGE, size=2, cpu=0.5, bootstrap="sleep 1")
    session = await manager.launch(spec)
    assert list(session.timings) == LAUNCH_PHASES
    assert session.timings["bootstrap"] >= BOOTSTRAP_SECONDS - 0.02
    assert session.timings["ssh_ready"] < BOOTSTRAP_SECONDS
    await manager.terminate(session.id)
    await manager.close()


async def test_a_session_that_waited_shows_its_queue_time(tmp_path: Path) -> None:
    manager = make_manager(tmp_path, FakeAgent("local", cpu=1, ready_on_start=True))
    manager.pending_poll_interval = 0.05
    first = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE, cpu=1, mem="64m"))
    waiting = await manager.submit(manager.make_spec(image=DEFAULT_IMAGE, cpu=1, mem="64m"))
    assert waiting.status is SessionStatus.PENDING and waiting.timings == {}
    driven = asyncio.ensure_future(manager.drive(waiting.id))
    await asyncio.sleep(0.3)
    await manager.terminate(first.id)
    second = await driven
    assert list(second.timings) == LAUNCH_PHASES
    assert second.timings["queue"] >= 0.25
    await manager.terminate(second.id)
    await manager.close()


async def test_a_failed_launch_keeps_the_phases_it_got_through(tmp_path: Path) -> None:
    agent = FakeAgent("local", ready_on_start=True)
    agent.fail_on["start_container:sub1"] = AgentError("no room for sub1")
    manager = make_manager(tmp_path, agent)
    with pytest.raises(LaunchFailed):
        await manager.launch(manager.make_spec(image=DEFAULT_IMAGE, size=2, cpu=0.5))
    (failed,) = await manager.list(include_ended=True)
    assert failed.status is SessionStatus.ERROR
    assert list(failed.timings) == ["queue", "place", "network", "pull", "create", "files"]
    await manager.close()


def test_the_clock_ends_a_phase_with_its_last_container() -> None:
    clock = LaunchClock("s", ["main1", "sub1"])
    clock.network_done(0.0)
    clock.mark("main1", "create")
    clock.mark("main1", "files")
    assert "create" not in clock.timings
    clock.mark("sub1", "create")
    clock.mark("sub1", "files")
    assert list(clock.timings) == ["network", "create", "files"]
    assert all(v >= 0 for v in clock.timings.values())


def test_timings_are_ordered_and_give_when_the_session_ran() -> None:
    shuffled = {"start": 1.0, "queue": 2.0, "unknown": 5.0, "network": 0.12345}
    assert ordered(shuffled) == {"queue": 2.0, "network": 0.123, "start": 1.0}
    assert elapsed_until_running(100.0, {"queue": 2.0, "kernel_ready": 9.0}) == 102.0
