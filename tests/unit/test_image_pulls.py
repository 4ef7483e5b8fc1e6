"""Launches whose image an agent lacks: pulled during PREPARING, on the fake agents."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from jupyter_cluster.core.models import Session
from jupyter_cluster.core.state import ContainerStatus, SessionStatus
from jupyter_cluster.engine.agents.fake import DEFAULT_IMAGE, FakeAgent
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.errors import InvalidRequest, LaunchFailed

IMAGE = "reg.local:5000/team/img:1"
CREDS = {"reg.local:5000": {"username": "alice", "password": "s3cret"}}


def manager_for(tmp_path: Path, *agents: FakeAgent, **traits: Any) -> ClusterManager:
    by_id = {a.id: a for a in agents}
    return ClusterManager(
        db_path=str(tmp_path / "cluster.db"),
        data_root=str(tmp_path / "folders"),
        agents=[{"id": a.id} for a in agents],
        agent_factory=lambda config: by_id[config.id],
        pending_poll_interval=0.05,
        **traits,
    )


async def test_a_launch_pulls_with_the_registrys_credentials_and_shows_it(
    tmp_path: Path,
) -> None:
    # Only the image of the hosts' guard (pushed to every agent, as the README says).
    agent = FakeAgent("a1", images=(DEFAULT_IMAGE,), ready_on_start=True)
    agent.registry = {IMAGE}
    agent.registry_auth = {"username": "alice", "password": "s3cret"}
    manager = manager_for(tmp_path, agent, registry_credentials=CREDS)
    seen: list[Session] = []
    session = await manager.launch(manager.make_spec(image=IMAGE, size=2), on_change=seen.append)
    assert session.status is SessionStatus.RUNNING
    assert agent.pulls == [(IMAGE, {**CREDS["reg.local:5000"], "serveraddress": "reg.local:5000"})]
    pulling = [c for s in seen for c in s.containers if c.status is ContainerStatus.PULLING]
    assert {c.host for c in pulling} == {"main1", "sub1"}
    assert any("agent a1 pulling" in c.status_reason for c in pulling)
    assert all(c.status_reason == "" for c in session.containers)
    assert "pull" in manager.store.require(session.id).timings
    again = await manager.launch(manager.make_spec(image=IMAGE, size=1))
    assert len(agent.pulls) == 1  # the second launch finds it there
    for s in (session, again):
        await manager.terminate(s.id)
    await manager.close()


async def test_agents_with_the_image_are_preferred_to_a_pull(tmp_path: Path) -> None:
    roomy = FakeAgent("a-roomy", images=(DEFAULT_IMAGE,), cpu=16.0)
    roomy.registry = {IMAGE}
    has_it = FakeAgent("b-has", images=(IMAGE, DEFAULT_IMAGE), cpu=2.0, ready_on_start=True)
    manager = manager_for(tmp_path, roomy, has_it)
    session = await manager.launch(manager.make_spec(image=IMAGE, size=2, cpu=1))
    assert {c.agent for c in session.containers} == {"b-has"}
    assert roomy.pulls == []
    await manager.terminate(session.id)
    await manager.close()


@pytest.mark.parametrize(
    ("setup", "words"),
    [
        ("password", ["agent a1 could not pull", "unauthorized", "registry_credentials"]),
        ("unknown", ["agent a1 could not pull", "manifest unknown", "name and tag"]),
        ("down", ["agent a1 could not pull", "connection refused", "reg.local:5000 up"]),
    ],
)
async def test_a_failed_pull_ends_the_launch_in_error_with_nothing_left(
    tmp_path: Path, setup: str, words: list[str]
) -> None:
    agent = FakeAgent("a1", images=(), ready_on_start=True)
    agent.registry = {IMAGE} if setup != "unknown" else set()
    agent.registry_auth = {"password": "right"} if setup == "password" else None
    if setup == "down":
        from jupyter_cluster.errors import AgentError

        agent.fail_on["pull_image"] = AgentError(
            "agent a1: pulling x failed: Get https://reg.local:5000/v2/: connection refused", "a1"
        )
    manager = manager_for(tmp_path, agent, registry_credentials=CREDS)
    with pytest.raises(LaunchFailed):
        await manager.launch(manager.make_spec(image=IMAGE, size=2))
    ended = manager.store.list(include_ended=True)[0]
    assert ended.status is SessionStatus.ERROR
    for word in words:
        assert word in ended.status_reason
    assert "s3cret" not in ended.status_reason
    assert agent.containers == {} and agent.networks == {}
    await manager.close()


async def test_a_pull_that_takes_too_long_fails_the_launch(tmp_path: Path) -> None:
    agent = FakeAgent("a1", images=())
    agent.registry = {IMAGE}

    async def stuck(*args: Any, **kwargs: Any) -> None:
        await asyncio.sleep(30)

    agent.pull_image = stuck  # type: ignore[method-assign]
    manager = manager_for(tmp_path, agent, image_pull_timeout=0.2)
    with pytest.raises(LaunchFailed, match=r"not done within 0\.2 s"):
        await manager.launch(manager.make_spec(image=IMAGE))
    assert agent.networks == {}
    await manager.close()


async def test_allowed_registries_refuse_other_images_but_never_the_default(
    tmp_path: Path,
) -> None:
    agent = FakeAgent("a1", images=(DEFAULT_IMAGE, "ghcr.io/x/y:1"))
    manager = manager_for(tmp_path, agent, allowed_registries=["reg.local:5000"])
    with pytest.raises(InvalidRequest) as caught:
        manager.make_spec(image="ghcr.io/x/y:1")
    assert caught.value.field == "image"
    assert manager.make_spec().image == DEFAULT_IMAGE
    assert manager.make_spec(image=IMAGE).image == IMAGE
    await manager.close()


async def test_without_pulls_an_agent_lacking_the_image_is_left_out(tmp_path: Path) -> None:
    agent = FakeAgent("a1", images=())
    agent.registry = {IMAGE}
    manager = manager_for(tmp_path, agent, pull_images=False)
    with pytest.raises(InvalidRequest, match="has the image"):
        await manager.submit(manager.make_spec(image=IMAGE))
    assert agent.pulls == []
    await manager.close()
