"""Cluster sessions across several Docker hosts (issue: several Docker hosts, safely).

Three Docker-in-Docker agents in one Swarm (``agents`` fixture; agent1 serves its
API over TLS only). Each test runs an engine in this process with its own store
(a :class:`~jupyter_cluster.engine.manager.ClusterManager` configured with the
agents, each given room for 2 containers of 0.5 CPU), and ends by checking that
nothing of its sessions is left on any agent.

- TLS: a plain ``tcp://`` config is refused; the TLS agent answers with certificates.
- Placement: a multi-node session too big for one agent spans agents of the Swarm
  (``ssh subN`` works across them); one that fits stays on one agent.
- Shared data folders: a file written in main1 is read in a sub on another agent;
  an agent whose data_root lacks the folder fails the launch clearly; what only an
  agent mounted below a read-only folder is not shown in its containers.
- Agent loss and return: a paused agent is unavailable within the timeout, its
  session degraded with the reason, other calls answer; unpaused, it runs again.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.errors import AgentError, InvalidRequest, LaunchFailed

from .agents import AgentCluster
from .support import SMALL, engine, leftovers

pytestmark = pytest.mark.docker


@pytest.fixture
async def manager(tmp_path: Path, agents: AgentCluster) -> AsyncIterator[ClusterManager]:
    """An engine on the three agents; its sessions are ended and checked afterwards."""
    mgr = engine(tmp_path, agents)
    await mgr.start()
    yield mgr
    for session in await mgr.list():
        await mgr.terminate(session.id)
    manager_id = mgr.store.manager_id
    await mgr.close()
    assert leftovers(agents, manager_id) == {}


async def output_of(manager: ClusterManager, ref: str, host: str, *cmd: str) -> str:
    """What ``cmd`` prints in ``host``; fails on a non-zero exit."""
    chunks: list[bytes] = []

    def collect(stream: int, data: bytes) -> None:
        chunks.append(data)

    code = await manager.exec(ref, host, list(cmd), on_output=collect)
    text = b"".join(chunks).decode()
    assert code == 0, f"{cmd} in {host} exited with {code}: {text}"
    return text


# -- TLS --------------------------------------------------------------------------------


async def test_tls_agent_needs_certificates(tmp_path: Path, agents: AgentCluster) -> None:
    tls_agent = agents["agent1"]
    assert tls_agent.tls and tls_agent.url.endswith(":2376")
    plain = {k: v for k, v in tls_agent.config().items() if k != "tls"}
    with pytest.raises(InvalidRequest, match="plain TCP Docker API"):
        engine(tmp_path, agents, agent_configs=[plain])
    # speaking plain HTTP to the TLS port is refused by the agent
    insecure = engine(tmp_path, agents, agent_configs=[{**plain, "insecure": True}])
    (row,) = await insecure.agents_info()
    assert row["reachable"] is False and "agent1" in str(row["message"])
    await insecure.close()
    secure = engine(tmp_path, agents, agent_configs=[tls_agent.config()])
    (row,) = await secure.agents_info()
    assert row["reachable"] is True and row["swarm"], row
    await secure.close()


# -- placement and SSH across agents ------------------------------------------------------


async def test_a_session_too_big_for_one_agent_spans_the_swarm(
    manager: ClusterManager,
) -> None:
    rows = await manager.agents_info()
    assert len({r["swarm"] for r in rows}) == 1 and all(r["warning"] == "" for r in rows)
    spec = manager.make_spec(size=3, mode="multi-node", **SMALL)
    session = await asyncio.wait_for(manager.launch(spec), 240)
    assert session.status is SessionStatus.RUNNING
    placed = [c.agent for c in session.containers]
    assert len(set(placed)) == 2, placed
    for src in ("main1", "sub2"):
        for dst in ("sub1", "sub2", "main1"):
            if dst != src:
                assert (
                    await output_of(manager, session.id, src, "ssh", dst, "hostname")
                ).strip() == dst
    small = await asyncio.wait_for(
        manager.launch(manager.make_spec(size=2, mode="multi-node", **SMALL)), 240
    )
    assert len({c.agent for c in small.containers}) == 1


# -- shared data folders --------------------------------------------------------------------


async def test_a_data_folder_is_the_same_storage_on_every_agent(
    manager: ClusterManager,
) -> None:
    manager.folders_for("").create("shared")
    spec = manager.make_spec(size=3, mode="multi-node", mounts=["shared"], **SMALL)
    session = await asyncio.wait_for(manager.launch(spec), 240)
    main_agent = session.containers[0].agent
    far = next(c.host for c in session.containers if c.agent != main_agent)
    token = uuid.uuid4().hex
    await output_of(manager, session.id, "main1", "sh", "-c", f"echo {token} > shared/note.txt")
    assert (await output_of(manager, session.id, far, "cat", "shared/note.txt")).strip() == token


async def test_an_agent_without_the_folder_fails_the_launch_clearly(
    tmp_path: Path, agents: AgentCluster
) -> None:
    configs = [agents["agent2"].config(cpu=1, mem="4g", data_root="/no-such-shared-root")]
    mgr = engine(tmp_path, agents, agent_configs=configs)
    mgr.folders_for("").create("results")
    try:
        with pytest.raises(LaunchFailed) as failed:
            await asyncio.wait_for(mgr.launch(mgr.make_spec(mounts=["results"], **SMALL)), 120)
        message = str(failed.value)
        assert "does not exist on this agent" in message and "/no-such-shared-root" in message
        (ended,) = await mgr.list()
        assert ended.status is SessionStatus.ERROR
        await mgr.terminate(ended.id)
        assert leftovers(agents, mgr.store.manager_id) == {}
    finally:
        await mgr.close()


async def test_what_only_an_agent_mounted_below_a_read_only_folder_is_not_shown_writable(
    tmp_path: Path, agents: AgentCluster
) -> None:
    """A file system the agent's host alone has mounted below a read-only folder (here a
    tmpfs inside agent2's container, which this engine's mount table lacks): Docker 20.10
    would show it writable in a session on that agent; it is left out instead, and the
    folder stays read-only where it was."""
    agent = agents["agent2"]
    mgr = engine(tmp_path, agents, agent_configs=[agent.config(cpu=1, mem="4g")])
    mgr.folders_for("").create("ref")
    below = Path(agents.data_root) / "ref" / "scratch"
    below.mkdir()
    mounted = agent.inside("mount", "-t", "tmpfs", "-o", "mode=1777", "jc-test", str(below))
    assert mounted.returncode == 0, mounted.stderr
    try:
        assert agent.inside("touch", str(below / "inside.txt")).returncode == 0
        spec = mgr.make_spec(mounts=["ref:ro"], **SMALL)
        session = await asyncio.wait_for(mgr.launch(spec), 120)
        tried = (
            "ls -A ref/scratch; touch ref/scratch/new 2>/dev/null && echo written || echo refused"
        )
        assert await output_of(mgr, session.id, "main1", "sh", "-c", tried) == "refused\n"
        await mgr.terminate(session.id)
        listed = agent.inside("ls", "-A", str(below))
        assert listed.stdout.split() == ["inside.txt"], listed
        assert leftovers(agents, mgr.store.manager_id) == {}
    finally:
        await mgr.close()
        agent.inside("umount", str(below))


# -- agent loss and return ------------------------------------------------------------------


async def test_a_lost_agent_degrades_its_sessions_until_it_returns(
    tmp_path: Path, agents: AgentCluster
) -> None:
    configs = [agents["agent3"].config(cpu=1, mem="4g")]
    mgr = engine(tmp_path, agents, agent_configs=configs, docker_timeout=2.0)
    lost = agents["agent3"]
    try:
        session = await asyncio.wait_for(mgr.launch(mgr.make_spec(size=2, **SMALL)), 240)
        lost.pause()
        try:
            began = time.monotonic()
            (row,) = await mgr.agents_info()
            assert row["reachable"] is False and "agent3" in str(row["message"])
            assert time.monotonic() - began < 15
            await asyncio.wait_for(mgr.refresh(), 30)
            degraded = await mgr.get(session.id)
            assert degraded.status is SessionStatus.RUNNING_DEGRADED
            assert "agent3" in degraded.status_reason
            assert [s.id for s in await mgr.list()] == [session.id]  # the store answers
            with pytest.raises(AgentError) as caught:
                await asyncio.wait_for(output_of(mgr, session.id, "sub1", "true"), 30)
            assert caught.value.agent == "agent3"
        finally:
            lost.unpause()
        await asyncio.wait_for(mgr.refresh(), 60)
        back = await mgr.get(session.id)
        assert back.status is SessionStatus.RUNNING and back.status_reason == ""
        assert (await output_of(mgr, session.id, "sub1", "hostname")).strip() == "sub1"
        await mgr.terminate(session.id)
        assert leftovers(agents, mgr.store.manager_id) == {}
    finally:
        await mgr.close()
