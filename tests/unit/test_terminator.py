"""SessionTerminator alone, with a store and the fake agent (no ClusterManager, no Docker).

Terminating sweeps until a launch in another process has let go of the network,
reports what it could not remove (a network Docker keeps busy with no container on it
too, and what to do about it), cancels a waiting session, keeps logs and why
a failed session ended, and abandons a cancelled launch without leaving anything.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from jupyter_cluster.core import naming
from jupyter_cluster.core.models import LaunchSpec, Session
from jupyter_cluster.core.state import ContainerStatus, SessionStatus
from jupyter_cluster.engine.agents.fake import DEFAULT_IMAGE, FakeAgent
from jupyter_cluster.engine.launch.teardown import tear_down
from jupyter_cluster.errors import AgentError, ClusterError

from .engine_parts import Parts, build


async def placed(parts: Parts, size: int) -> Session:
    """A session submitted and placed on the fake agent (PREPARING, nothing made)."""
    spec = LaunchSpec.create(image=DEFAULT_IMAGE, size=size)
    return await parts.launcher.submit(spec)


async def test_terminating_a_preparing_session_sweeps_until_the_network_is_free(
    tmp_path: Path,
) -> None:
    """A launch in another process may still be creating containers: the network
    stays busy for a moment, and terminate must keep sweeping rather than fail."""
    agent = FakeAgent("local")
    parts = build(tmp_path, agent)
    session = await placed(parts, 2)
    assert session.status is SessionStatus.PREPARING
    labels = naming.network_labels(session, parts.store.manager_id)
    await agent.create_network(naming.network_name(session), labels, overlay=False)
    agent.fail_on["remove_network"] = AgentError("network has active endpoints")

    async def launch_finishes_creating() -> None:
        await asyncio.sleep(0.7)
        del agent.fail_on["remove_network"]

    freed = asyncio.ensure_future(launch_finishes_creating())
    ended = await parts.terminator.terminate(session.id)
    await freed
    assert ended.status is SessionStatus.TERMINATED
    assert [c.status for c in ended.containers] == [ContainerStatus.TERMINATED] * 2
    assert sum(1 for method, _ in agent.calls if method == "remove_network") >= 2
    assert not agent.networks
    parts.close()


async def test_terminating_a_running_session_reports_what_it_could_not_remove(
    tmp_path: Path,
) -> None:
    agent = FakeAgent("local")
    parts = build(tmp_path, agent)
    session = await placed(parts, 1)
    parts.store.set_status(session.id, SessionStatus.RUNNING)
    labels = naming.network_labels(session, parts.store.manager_id)
    await agent.create_network(naming.network_name(session), labels, overlay=False)
    agent.fail_on["remove_network"] = AgentError("engine went away")
    with pytest.raises(ClusterError) as info:
        await parts.terminator.terminate(session.id)
    assert "could not remove everything" in str(info.value)
    assert "engine went away" in str(info.value)
    assert parts.store.require(session.id).status is SessionStatus.TERMINATING
    parts.close()


async def test_a_network_docker_will_not_free_says_to_restart_docker_and_can_be_removed_after(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Docker may keep a stale endpoint on a network whose containers are all gone:
    the session stays TERMINATING with an error saying what to do (once: not logged
    as well), and removing it again once Docker let go of the network finishes the job."""
    agent = FakeAgent("local", ready_on_start=True)
    parts = build(tmp_path, agent)
    session = await parts.launcher.launch(LaunchSpec.create(image=DEFAULT_IMAGE, size=2))
    network = naming.network_name(session)
    agent.stale_endpoints.add(network)
    with caplog.at_level(logging.WARNING), pytest.raises(ClusterError) as info:
        await parts.terminator.terminate(session.id)
    assert not [r for r in caplog.records if "active endpoints" in r.getMessage()]
    message = str(info.value)
    assert f"removing network {network} failed: it has active endpoints" in message
    assert "lists no container on it" in message
    assert "restart Docker on agent local, then try again" in message
    assert parts.store.require(session.id).status is SessionStatus.TERMINATING
    assert not agent.containers and len(agent.networks) == 1
    agent.stale_endpoints.clear()  # Docker restarted
    ended = await parts.terminator.terminate(session.id)
    assert ended.status is SessionStatus.TERMINATED
    assert not agent.networks
    parts.close()


async def test_a_clean_up_that_goes_on_without_its_problems_logs_them(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A failed launch's clean-up and reconciliation call tear_down and go on: what it
    could not remove is logged, or nobody would hear of it."""
    agent = FakeAgent("local", ready_on_start=True)
    parts = build(tmp_path, agent)
    session = await parts.launcher.launch(LaunchSpec.create(image=DEFAULT_IMAGE, size=2))
    network = naming.network_name(session)
    agent.stale_endpoints.add(network)
    with caplog.at_level(logging.WARNING):
        problems = await tear_down(session, {"local": agent}, parts.store.manager_id)
    assert len(problems) == 1 and "restart Docker on agent local" in problems[0]
    logged = [r.getMessage() for r in caplog.records if "active endpoints" in r.getMessage()]
    assert logged == [f"clean-up of session {session.id}: {problems[0]}"]
    agent.stale_endpoints.clear()
    assert await tear_down(session, {"local": agent}, parts.store.manager_id) == []
    parts.close()


async def test_a_running_session_ends_with_its_logs_kept_and_its_keys_gone(
    tmp_path: Path,
) -> None:
    agent = FakeAgent("local", ready_on_start=True)
    parts = build(tmp_path, agent)
    session = await parts.launcher.launch(LaunchSpec.create(image=DEFAULT_IMAGE, size=2))
    assert session.status is SessionStatus.RUNNING
    agent.emit(session.containers[1].container_id or "", "last words of sub1")
    ended = await parts.terminator.terminate(session.id, reason="done for today")
    assert (ended.status, ended.status_reason) == (SessionStatus.TERMINATED, "done for today")
    assert not agent.containers and not agent.networks
    assert parts.store.load_keys(session.id) is None
    assert "last words of sub1\n" in list(parts.archive.lines(session.id, "sub1"))
    parts.close()


async def test_logs_are_not_kept_when_the_settings_say_so(tmp_path: Path) -> None:
    agent = FakeAgent("local", ready_on_start=True)
    parts = build(tmp_path, agent, keep_logs=False)
    session = await parts.launcher.launch(LaunchSpec.create(image=DEFAULT_IMAGE))
    await parts.terminator.terminate(session.id)
    assert not parts.archive.has(session.id, "main1")
    parts.close()


async def test_a_session_in_error_keeps_why_it_failed(tmp_path: Path) -> None:
    agent = FakeAgent("local")
    parts = build(tmp_path, agent)
    session = await placed(parts, 1)
    parts.store.set_status(session.id, SessionStatus.ERROR, "main1 never got ready")
    ended = await parts.terminator.terminate(session.id)
    assert ended.status is SessionStatus.TERMINATED
    assert ended.status_reason == "removed after an error: main1 never got ready"
    again = await parts.terminator.terminate(session.id)  # already final: unchanged
    assert again == ended
    parts.close()


async def test_abandoning_cancels_a_waiting_session_and_removes_a_placed_one(
    tmp_path: Path,
) -> None:
    agent = FakeAgent("local", cpu=1.0)
    parts = build(tmp_path, agent)
    first = await placed(parts, 1)
    waiting = await parts.launcher.submit(LaunchSpec.create(image=DEFAULT_IMAGE, cpu=1))
    assert waiting.status is SessionStatus.PENDING
    await parts.terminator.abandon(waiting.id)
    cancelled = parts.store.require(waiting.id)
    assert (cancelled.status, cancelled.status_reason) == (
        SessionStatus.CANCELLED,
        "cancelled while waiting",
    )
    await parts.terminator.abandon(first.id)
    assert parts.store.require(first.id).status is SessionStatus.TERMINATED
    parts.close()


async def test_finishing_another_processs_termination_keeps_its_reason(tmp_path: Path) -> None:
    """Reconciliation finishes a termination left TERMINATING (no reason of its own):
    the session ends with the reason its first terminate gave (a batch job's result,
    a lifetime), not a bare "terminated"."""
    agent = FakeAgent("local")
    parts = build(tmp_path, agent)
    session = await placed(parts, 1)
    parts.store.set_status(session.id, SessionStatus.RUNNING)
    labels = naming.network_labels(session, parts.store.manager_id)
    await agent.create_network(naming.network_name(session), labels, overlay=False)
    agent.fail_on["remove_network"] = AgentError("engine went away")
    with pytest.raises(ClusterError):
        await parts.terminator.terminate(session.id, "reached its maximum lifetime of 5s")
    stuck = parts.store.require(session.id)
    assert stuck.status is SessionStatus.TERMINATING
    assert stuck.status_reason == "reached its maximum lifetime of 5s"
    del agent.fail_on["remove_network"]
    ended = await parts.terminator.terminate(session.id)  # as reconciliation calls it
    assert (ended.status, ended.status_reason) == (
        SessionStatus.TERMINATED,
        "reached its maximum lifetime of 5s",
    )
    parts.close()
