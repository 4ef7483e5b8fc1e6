"""A launch cancelled while Docker creates a container leaves nothing behind.

Docker finishes a creation whose client went away, possibly after the clean-up's
label sweep has looked: bring_up and the warm pool wait for Docker's answer and
remove what it made. The fake agent here creates as Docker does (the container
appears after a while, whether or not the caller still waits)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from jupyter_cluster.core.models import LaunchSpec
from jupyter_cluster.core.resources import Resources
from jupyter_cluster.core.warm import WarmShape
from jupyter_cluster.engine.agents.base import ContainerSpec
from jupyter_cluster.engine.agents.fake import DEFAULT_IMAGE, FakeAgent
from jupyter_cluster.engine.warm_make import make_set

from .engine_parts import build


class DockerLikeCreates(FakeAgent):
    """Containers appear 0.05 s after a create, networks 0.03 s after, even if its
    caller is cancelled. ``asked``: the hosts whose creation was asked for;
    ``networks_asked``: the networks'."""

    asked: list[str]
    networks_asked: list[str]

    async def create_network(self, name: str, *args: object, **kwargs: object) -> str:
        self.networks_asked = [*getattr(self, "networks_asked", []), name]

        async def made_later() -> str:
            await asyncio.sleep(0.03)
            return await FakeAgent.create_network(self, name, *args, **kwargs)  # type: ignore[arg-type]

        return await asyncio.shield(asyncio.ensure_future(made_later()))

    async def create_container(self, spec: ContainerSpec) -> str:
        self.asked = [*getattr(self, "asked", []), spec.hostname]

        async def made_later() -> str:
            await asyncio.sleep(0.05)
            return await FakeAgent.create_container(self, spec)

        return await asyncio.shield(asyncio.ensure_future(made_later()))


async def asked_for(agent: DockerLikeCreates, host: str) -> None:
    while host not in getattr(agent, "asked", []):
        await asyncio.sleep(0.001)


async def test_cancelled_while_main1_is_created_ahead_of_its_network(tmp_path: Path) -> None:
    agent = DockerLikeCreates("local", ready_on_start=True)
    parts = build(tmp_path, agent)
    launch = asyncio.ensure_future(
        parts.launcher.launch(LaunchSpec.create(image=DEFAULT_IMAGE, size=2))
    )
    await asked_for(agent, "main1")  # made ahead of the network, and not yet made
    assert agent.containers == {} and agent.asked == ["main1"]
    launch.cancel()
    await asyncio.gather(launch, return_exceptions=True)
    await asyncio.sleep(0.1)  # longer than Docker takes: a container made late would show
    assert agent.containers == {} and agent.networks == {}
    parts.close()


async def test_cancelled_while_the_subs_are_created(tmp_path: Path) -> None:
    agent = DockerLikeCreates("local", ready_on_start=True)
    parts = build(tmp_path, agent)
    launch = asyncio.ensure_future(
        parts.launcher.launch(LaunchSpec.create(image=DEFAULT_IMAGE, size=3))
    )
    await asked_for(agent, "sub2")  # the network is made; the subs' creates in flight
    assert not any(box.spec.hostname == "sub2" for box in agent.containers.values())
    launch.cancel()
    await asyncio.gather(launch, return_exceptions=True)
    await asyncio.sleep(0.1)
    assert agent.containers == {} and agent.networks == {}
    parts.close()


async def test_a_warm_set_cancelled_while_its_containers_are_created(tmp_path: Path) -> None:
    """The warm pool's refill cancelled (the server stopping) mid-create leaves nothing."""
    agent = DockerLikeCreates("local", ready_on_start=True)
    parts = build(tmp_path, agent)
    shape = WarmShape(image=DEFAULT_IMAGE, size=2, resources=Resources(cpu=0.5, mem=256 << 20))
    making = asyncio.ensure_future(make_set(parts.launcher.warm, ("local", "local"), shape, ()))
    await asked_for(agent, "sub1")
    making.cancel()
    await asyncio.gather(making, return_exceptions=True)
    await asyncio.sleep(0.1)
    assert agent.containers == {} and agent.networks == {}
    parts.close()


async def test_a_warm_set_cancelled_while_its_network_is_created(tmp_path: Path) -> None:
    """The server stopping just after a refill asked Docker for a set's network: the
    drain's sweep may list networks before Docker has made it, so the set itself
    waits for Docker's answer and removes the network (a CI run once kept one)."""
    agent = DockerLikeCreates("local", ready_on_start=True)
    parts = build(tmp_path, agent)
    shape = WarmShape(image=DEFAULT_IMAGE, size=2, resources=Resources(cpu=0.5, mem=256 << 20))
    making = asyncio.ensure_future(make_set(parts.launcher.warm, ("local", "local"), shape, ()))
    for _ in range(2000):  # 2 s at most
        if getattr(agent, "networks_asked", []) or making.done():
            break
        await asyncio.sleep(0.001)
    assert not making.done(), making
    assert agent.networks == {}  # asked for, not yet made
    making.cancel()
    await asyncio.gather(making, return_exceptions=True)
    await asyncio.sleep(0.1)  # longer than Docker takes: a network made late would show
    assert agent.containers == {} and agent.networks == {}
    assert agent.networks_asked[0].startswith("jc-warm-"), agent.networks_asked
    parts.close()
