"""The agent contract: the fake agent does what the Docker agent does.

The manager's unit tests run on the in-memory :class:`FakeAgent`; they are worth
what the fake is worth. Every test here runs twice, on the fake and on a
:class:`DockerAgent` on the local engine (marked ``docker``), makes the same calls
and expects the same outcomes, on whatever the two offer alike: networks,
containers (spec, files, start, state, exit, removal), exec, logs, stats, OOM
events, helpers run beside a container, images, capacity, and an engine that
cannot be reached. What only a test can do (a container's main process, the exec
commands) is done on each side in :mod:`tests.support.agent_contract`.

The two Docker-agent faults it found (stats of a container that does not run, a
helper of an image the agent lacks) are fixed in the Docker agent.
Out of reach of the contract, because the fake runs no processes and has no disk:
what a command prints on stderr or without a final newline, whether a bind mount's
source exists, and whether a container's network exists when it starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import AsyncIterator, Awaitable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from jupyter_cluster.core.resources import Resources
from jupyter_cluster.core.stats import usage_from_docker
from jupyter_cluster.engine.agents.base import (
    DEFAULT_BRIDGE,
    Agent,
    AgentInfo,
    BindMount,
    ContainerState,
    FileEntry,
    NetworkState,
    OomEvent,
)
from jupyter_cluster.engine.agents.fake import FakeAgent
from jupyter_cluster.errors import AgentError
from tests.support.agent_contract import (
    AGENT_ID,
    CPU,
    FAILING,
    GROW,
    IMAGE,
    LABEL_CASE,
    MEM,
    SMALL,
    WHO_WHERE,
    Script,
    Side,
    describe,
    docker_side,
    fake_side,
)
from tests.support.constants import MIB

SIDES = [pytest.param("fake"), pytest.param("docker", marks=pytest.mark.docker)]
ABSENT_IMAGE = "jupyter-cluster/contract-absent:0"
STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
MISSING_ID = "0" * 64


@pytest.fixture(params=SIDES)
async def side(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Side]:
    """The fake, or a DockerAgent on the local engine; what a test made is removed."""
    made = fake_side() if request.param == "fake" else docker_side(tmp_path)
    try:
        yield made
    finally:
        await made.close()


@pytest.fixture(params=SIDES)
async def down(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Agent]:
    """The same agent, with its engine out of reach."""
    if request.param == "fake":
        agent: Agent = fake_side().agent
        assert isinstance(agent, FakeAgent)
        agent.reachable = False
    else:
        agent = docker_side(tmp_path, url=f"unix://{tmp_path}/absent.sock").agent
    try:
        yield agent
    finally:
        await agent.close()


async def refused(call: Awaitable[Any], match: str | None = None) -> AgentError:
    """The AgentError ``call`` raises; it names the agent (and matches ``match``)."""
    with pytest.raises(AgentError, match=match) as caught:
        await call
    assert caught.value.agent == AGENT_ID
    assert str(caught.value).startswith(f"agent {AGENT_ID}"), str(caught.value)
    return caught.value


def ordered(state: ContainerState | None) -> ContainerState | None:
    """``state`` with its mounts by target: Docker lists them in no fixed order."""
    if state is None:
        return None
    return replace(state, mounts=tuple(sorted(state.mounts, key=lambda m: m.target)))


async def lines(agent: Agent, container_id: str, **kw: Any) -> list[str]:
    return [line async for line in agent.logs(container_id, **kw)]


class Output:
    """What an exec'd command wrote, by stream (1 stdout, 2 stderr)."""

    def __init__(self) -> None:
        self.streams: dict[int, bytes] = {}

    def sync(self, stream: int, data: bytes) -> None:
        self.streams[stream] = self.streams.get(stream, b"") + data

    async def __call__(self, stream: int, data: bytes) -> None:
        self.sync(stream, data)


# -- the agent and its images --------------------------------------------------------


async def test_info_reports_the_configured_capacity(side: Side) -> None:
    info = await side.agent.info()
    expected = AgentInfo(
        id=AGENT_ID,
        resource_group="default",
        capacity=Resources(cpu=CPU, mem=MEM, shm=0, gpu=0),
        gpu_ids=(),
        reachable=True,
        message="",
        swarm=info.swarm,
    )
    assert info == expected
    assert isinstance(info.swarm, str)


async def test_images_present_absent_and_invalid(side: Side) -> None:
    agent = side.agent
    assert await agent.has_image(IMAGE) is True
    assert await agent.has_image(IMAGE.removesuffix(":latest")) is True  # x is x:latest
    assert await agent.has_image(ABSENT_IMAGE) is False
    await refused(agent.has_image("Jupyter-Cluster/Kernel"), "(?i)invalid reference")


async def test_an_unreachable_engine(down: Agent) -> None:
    info = await down.info()
    assert (info.id, info.reachable, info.capacity, info.gpu_ids, info.swarm) == (
        AGENT_ID,
        False,
        Resources(0, 0, 0, 0),
        (),
        "",
    )
    assert info.message.startswith(f"agent {AGENT_ID}")
    spec = Side("down", down).spec("main1", "net")
    calls: list[Awaitable[Any]] = [
        down.has_image(IMAGE),
        down.create_network("net", {}, overlay=False),
        down.remove_network("net"),
        down.list_networks({}),
        down.list_containers({}),
        down.create_container(spec),
        down.inspect_container(MISSING_ID),
        down.remove_container(MISSING_ID),
        down.start_container(MISSING_ID),
        down.put_files(MISSING_ID, [FileEntry("/tmp/f", b"x")]),
        down.exec(MISSING_ID, ["true"]),
        down.stats(MISSING_ID),
        lines(down, MISSING_ID),
        down.run_beside(MISSING_ID, IMAGE, "true", (), {}),
        anext(aiter(down.oom_events({}))),
    ]
    for call in calls:
        await refused(call)


# -- networks ---------------------------------------------------------------------------


async def test_networks_by_name_id_and_label(side: Side) -> None:
    agent, name = side.agent, side.name("net")
    net_id = await agent.create_network(name, side.labels, overlay=False)
    assert isinstance(net_id, str) and net_id
    assert await agent.list_networks(side.labels) == [
        NetworkState(net_id, name, side.labels, "bridge")
    ]
    assert await agent.list_networks({**side.labels, LABEL_CASE: "other"}) == []
    await refused(agent.create_network(name, side.labels, overlay=False), "already exists")
    await agent.remove_network(name)
    assert await agent.list_networks(side.labels) == []
    await agent.remove_network(name)  # a missing one is fine, by name …
    await agent.remove_network(net_id)  # … or by id
    again = await agent.create_network(name, side.labels, overlay=False)
    await agent.remove_network(again)
    assert await agent.list_networks(side.labels) == []


async def test_an_overlay_network_needs_a_swarm(side: Side) -> None:
    agent, name = side.agent, side.name("overlay")
    if (await agent.info()).swarm:
        await agent.create_network(name, side.labels, overlay=True)
        [found] = await agent.list_networks(side.labels)
        assert (found.name, found.driver) == (name, "overlay")
    else:
        await refused(agent.create_network(name, side.labels, overlay=True), "(?i)swarm")
        assert await agent.list_networks(side.labels) == []


async def test_a_network_in_use_is_not_removed(side: Side) -> None:
    agent = side.agent
    busy, idle = await side.network("busy"), await side.network("idle")
    running = await side.run("main1", busy)
    await side.create(side.spec("sub1", idle))  # created, never started: not attached
    # The refusal names who is on the network and how to free it.
    refusal = await refused(agent.remove_network(busy), "active endpoints")
    assert f"{side.name('main1')} still on it" in str(refusal), str(refusal)
    assert f"docker network disconnect {busy} CONTAINER" in str(refusal), str(refusal)
    await agent.remove_network(idle)
    assert [n.name for n in await agent.list_networks(side.labels)] == [busy]
    await agent.remove_container(running)
    await agent.remove_network(busy)
    assert await agent.list_networks(side.labels) == []


async def test_a_new_container_moves_from_the_default_bridge_to_a_network(side: Side) -> None:
    agent = side.agent
    network = await side.network()
    made = await side.create(side.spec("main1", DEFAULT_BRIDGE))
    await agent.move_to_network(made, network, ("main1",))
    await side.start(made)
    await side.settled(made)
    # It runs on the network now: the network has an active endpoint.
    await refused(agent.remove_network(network), "active endpoints")
    await agent.remove_container(made)
    await agent.remove_network(network)
    assert await agent.list_networks(side.labels) == []


# -- containers -------------------------------------------------------------------------


async def test_a_container_from_creation_to_removal(side: Side, tmp_path: Path) -> None:
    agent = side.agent
    network = await side.network()
    data, shared = (tmp_path / "data").resolve(), (tmp_path / "shared").resolve()
    data.mkdir()
    shared.mkdir()
    mounts = (
        BindMount(str(data), "/home/work/data", readonly=True),
        BindMount(str(shared), "/home/work/shared"),
    )
    script = Script(lines=("ready",))
    spec = side.spec("main1", network, script, publish=(8888, 2200), mounts=mounts)
    cid = await side.create(spec)
    created = ordered(await agent.inspect_container(cid))
    assert created is not None
    assert dict(created.labels).items() >= dict(spec.labels).items()  # (and the image's)
    assert replace(created, labels={}) == ContainerState(
        id=cid,
        name=spec.name,
        labels={},
        running=False,
        status="created",
        exit_code=0,
        oom_killed=False,
        finished_at="",
        ports={},
        image=IMAGE,
        resources=SMALL,
        mounts=mounts,
    )

    await side.start(cid)
    await side.settled(cid)
    state = ordered(await agent.inspect_container(cid))
    assert state is not None
    assert (state.running, state.status, state.exit_code, state.finished_at) == (
        True,
        "running",
        0,
        "",
    )
    assert set(state.ports) == {8888, 2200}
    for host, port in state.ports.values():
        assert host == "127.0.0.1" and isinstance(port, int) and 0 < port < 65536
    assert len({port for _, port in state.ports.values()}) == 2
    assert ordered(await agent.inspect_container(spec.name)) == state  # by name too
    assert [ordered(s) for s in await agent.list_containers(side.labels)] == [state]
    found = await agent.list_containers({**side.labels, LABEL_CASE: "main1"})
    assert [ordered(s) for s in found] == [state]
    assert await agent.list_containers({**side.labels, LABEL_CASE: "sub1"}) == []
    (brief,) = await agent.list_containers(side.labels, detail=False)
    assert (brief.id, brief.name, brief.labels, brief.running, brief.status) == (
        state.id,
        state.name,
        state.labels,
        True,
        "running",
    )

    await agent.remove_container(cid)  # running: killed and removed
    assert await agent.inspect_container(cid) is None
    assert await agent.inspect_container(spec.name) is None
    assert await agent.list_containers(side.labels) == []
    await agent.remove_container(cid)  # a missing one is fine


async def test_a_container_that_exits(side: Side) -> None:
    agent = side.agent
    network = await side.network()
    began = time.time()
    resources = Resources(cpu=1 / 3, mem=256 * MIB, shm=0, gpu=0)  # shm 0: Docker's 64m
    cid = await side.run(
        "sub1", network, Script(("one", "two"), code=3), publish=(8888,), resources=resources
    )
    state = await agent.inspect_container(cid)
    assert state is not None
    assert (state.running, state.status, state.exit_code, state.oom_killed, state.ports) == (
        False,
        "exited",
        3,
        False,
        {},
    )
    assert STAMP.fullmatch(state.finished_at), state.finished_at
    finished = time.mktime(time.strptime(state.finished_at, "%Y-%m-%dT%H:%M:%SZ")) - time.timezone
    assert began - 2 <= finished <= time.time() + 2
    assert state.resources == Resources(cpu=0.333333333, mem=256 * MIB, shm=64 * MIB, gpu=0)
    assert await agent.list_containers(side.labels) == [state]
    (brief,) = await agent.list_containers(side.labels, detail=False)
    assert (brief.id, brief.running, brief.status) == (cid, False, "exited")
    assert await lines(agent, cid) == ["one\n", "two\n"]
    await refused(agent.exec(cid, ["true"]), "(?i)not running")
    await agent.remove_container(cid)
    assert await agent.inspect_container(cid) is None


async def test_creating_refuses_a_used_name_and_a_missing_image(side: Side) -> None:
    network = await side.network()
    spec = side.spec("main1", network)
    await side.create(spec)
    await refused(side.agent.create_container(spec), "in use")
    other = side.spec("sub1", network, image=ABSENT_IMAGE)
    await refused(side.agent.create_container(other), "(?i)no such image")
    assert [c.name for c in await side.agent.list_containers(side.labels)] == [spec.name]


async def test_a_missing_container(side: Side) -> None:
    agent = side.agent
    assert await agent.inspect_container(MISSING_ID) is None
    await agent.remove_container(MISSING_ID)
    gone = "(?i)no such container"
    await refused(agent.start_container(MISSING_ID), gone)
    await refused(agent.put_files(MISSING_ID, [FileEntry("/tmp/f", b"x")]), gone)
    await refused(agent.exec(MISSING_ID, ["true"]), gone)
    await refused(agent.stats(MISSING_ID), gone)
    await refused(lines(agent, MISSING_ID), gone)
    await refused(agent.run_beside(MISSING_ID, IMAGE, "true", (), side.labels), gone)


async def test_files_put_before_and_after_start(side: Side) -> None:
    agent = side.agent
    network = await side.network()
    cid = await side.create(side.spec("main1", network))
    before = [
        FileEntry("/tmp/contract", b"", mode=0o750, uid=1000, gid=1000, directory=True),
        FileEntry("/tmp/contract/key", b"secret\n", mode=0o600, uid=1000, gid=1000),
        FileEntry("/tmp/contract/empty", b"", mode=0o644),
    ]
    await agent.put_files(cid, before)
    await side.start(cid)
    await agent.put_files(cid, [FileEntry("/tmp/contract/later", b"late\n", mode=0o640)])
    expected = {
        "/tmp/contract": (0, b"750 1000 1000 directory\n"),
        "/tmp/contract/key": (0, b"600 1000 1000 regular file\nsecret\n"),
        "/tmp/contract/empty": (0, b"644 0 0 regular empty file\n"),
        "/tmp/contract/later": (0, b"640 0 0 regular file\nlate\n"),
        "/tmp/contract/never-put": (1, b""),
    }
    for path, (code, stdout) in expected.items():
        out = Output()
        assert await agent.exec(cid, describe(path), user="root", on_output=out) == code, path
        assert out.streams.get(1, b"") == stdout, path


async def test_a_volume_carries_files_from_one_container_to_another(side: Side) -> None:
    """What a session's start-up files rely on (``launch/shared_files.py``): files put
    into a created container under a volume it mounts read-write land in the volume;
    a container mounting it read-only cannot be copied into there, copies its tree
    into place as it starts, and keeps the volume from being removed."""
    agent = side.agent
    network = await side.network()
    volume = await side.volume()
    assert await side.volume() == volume, "creating it again keeps it"
    target = "/opt/contract-files"
    carrier = await side.create(
        side.spec("main1", network, mounts=(BindMount(volume, target, volume=True),))
    )
    key = FileEntry(f"{target}/sub1/tree/tmp/contract/key", b"secret\n", 0o600, 1000, 1000)
    await agent.put_files(carrier, [FileEntry(target, b"", 0o700, directory=True), key])
    copy = f'cp -a "{target}/sub1/tree/." / && exec sleep 600'
    reader = side.spec(
        "sub1",
        network,
        mounts=(BindMount(volume, target, readonly=True, volume=True),),
        command=("/bin/sh", "-c", copy),
    )
    sub = await side.create(reader)
    await refused(agent.put_files(sub, [FileEntry(f"{target}/x", b"")]), "read-only")
    await side.start(sub)
    out = Output()
    assert await agent.exec(sub, describe("/tmp/contract/key"), user="root", on_output=out) == 0
    assert out.streams.get(1, b"") == b"600 1000 1000 regular file\nsecret\n"
    await refused(agent.remove_volume(volume), "in use")
    await agent.remove_container(sub)
    await agent.remove_container(carrier)
    await agent.remove_volume(volume)
    await agent.remove_volume(volume)  # gone already: not an error


# -- exec, logs, stats ------------------------------------------------------------------


async def test_exec_exit_codes_output_and_context(side: Side) -> None:
    agent = side.agent
    network = await side.network()
    created = await side.create(side.spec("sub1", network))
    await refused(agent.exec(created, ["true"]), "(?i)not running")
    cid = await side.run("main1", network)

    out = Output()
    assert await agent.exec(cid, FAILING, on_output=out) == 3
    assert out.streams == {1: b"out\n"}
    plain = Output()
    assert await agent.exec(cid, FAILING, on_output=plain.sync) == 3  # a plain callback
    assert plain.streams == {1: b"out\n"}
    assert await agent.exec(cid, FAILING) == 3  # nobody listening

    here = Output()
    assert await agent.exec(cid, WHO_WHERE, on_output=here) == 0
    assert here.streams == {1: b"hello work /home/work\n"}  # the spec's env, as work
    there = Output()
    code = await agent.exec(
        cid, WHO_WHERE, user="root", workdir="/tmp", env={"CONTRACT_WORD": "bye"}, on_output=there
    )
    assert (code, there.streams) == (0, {1: b"bye root /tmp\n"})


async def test_logs_of_a_created_and_an_exited_container(side: Side) -> None:
    agent = side.agent
    network = await side.network()
    created = await side.create(side.spec("sub1", network))
    assert await lines(agent, created) == []
    # Following a container that does not run ends at once (Docker does not wait).
    assert await asyncio.wait_for(lines(agent, created, follow=True), 10) == []

    cid = await side.run("main1", network, Script(("a", "b", "c"), code=0))
    assert await lines(agent, cid) == ["a\n", "b\n", "c\n"]
    assert await lines(agent, cid, tail=2) == ["b\n", "c\n"]
    assert await lines(agent, cid, tail=10) == ["a\n", "b\n", "c\n"]
    assert await lines(agent, cid, tail=0) == []
    assert await lines(agent, cid, tail=-1) == []
    assert await asyncio.wait_for(lines(agent, cid, follow=True), 10) == ["a\n", "b\n", "c\n"]
    assert await lines(agent, side.name("main1")) == ["a\n", "b\n", "c\n"]  # by name


async def test_followed_logs_end_when_the_container_exits_or_goes(side: Side) -> None:
    agent = side.agent
    network = await side.network()
    script = Script(("one", "two"), code=0, delay=0.5)
    exits = await side.create(side.spec("main1", network, script))
    await side.start(exits)
    follower = asyncio.create_task(lines(agent, exits, follow=True))
    assert await asyncio.wait_for(follower, 20) == ["one\n", "two\n"]

    stays = await side.run("sub1", network, Script(("up",)))
    follower = asyncio.create_task(lines(agent, stays, follow=True, tail=0))
    await asyncio.sleep(0.3)
    assert not follower.done()
    await agent.remove_container(stays)
    assert await asyncio.wait_for(follower, 20) == []


async def test_stats_of_a_running_container(side: Side) -> None:
    network = await side.network()
    cid = await side.run("main1", network)
    raw = await side.agent.stats(cid)
    assert isinstance(raw.get("read"), str) and raw["read"].endswith("Z")
    cpu, pre = raw["cpu_stats"], raw["precpu_stats"]
    assert isinstance(cpu["cpu_usage"]["total_usage"], int)
    assert isinstance(cpu["system_cpu_usage"], int)
    assert isinstance(cpu["online_cpus"], int) and cpu["online_cpus"] >= 1
    assert isinstance(pre["cpu_usage"]["total_usage"], int)
    assert isinstance(raw["memory_stats"]["usage"], int)
    assert raw["memory_stats"]["limit"] == SMALL.mem
    for counters in raw["networks"].values():
        assert isinstance(counters["rx_bytes"], int) and isinstance(counters["tx_bytes"], int)
    assert raw["pids_stats"]["current"] >= 1
    usage = usage_from_docker(raw)
    assert usage.mem_limit == SMALL.mem and usage.pids >= 1
    assert STAMP.fullmatch(usage.at) and not usage.at.startswith("0001-")
    assert usage.cpu_percent >= 0


async def test_stats_of_a_container_that_does_not_run(side: Side) -> None:
    network = await side.network()
    cid = await side.create(side.spec("main1", network))
    await refused(side.agent.stats(cid), "(?i)not running")


# -- OOM events, helpers beside a container ---------------------------------------------


@contextlib.asynccontextmanager
async def following(events: AsyncIterator[OomEvent]) -> AsyncIterator[AsyncIterator[OomEvent]]:
    """``events``, closed (its stream released) at the end."""
    try:
        yield events
    finally:
        close = getattr(events, "aclose", None)
        if close is not None:
            await close()


async def next_event(events: AsyncIterator[OomEvent]) -> OomEvent:
    return await anext(events)


async def test_an_oom_kill_is_followed_by_label(side: Side) -> None:
    agent = side.agent
    network = await side.network()
    cid = await side.run("main1", network)
    began = time.time()
    mine = agent.oom_events({**side.labels, LABEL_CASE: "main1"}, since=began - 1)
    others = agent.oom_events({**side.labels, LABEL_CASE: "sub1"}, since=began - 1)
    async with following(mine), following(others):
        first = asyncio.create_task(next_event(mine))
        try:
            assert await agent.exec(cid, GROW) == 137  # SIGKILL, from the OOM killer
            event = await asyncio.wait_for(first, 20)
        finally:
            first.cancel()
        assert event.container_id == cid
        assert began - 2 <= event.time <= time.time() + 2
        with pytest.raises(asyncio.TimeoutError):  # not a kill in a container with its labels
            await asyncio.wait_for(next_event(others), 1)
    state = await agent.inspect_container(cid)
    assert state is not None and state.running and not state.oom_killed  # init lives on


async def test_a_helper_beside_a_container(side: Side) -> None:
    agent = side.agent
    network = await side.network()
    cid = await side.run("main1", network)
    helper = {**side.labels, LABEL_CASE: "beside"}
    assert await agent.run_beside(cid, IMAGE, "true", ("NET_ADMIN",), helper) == (0, "")
    assert await agent.list_containers(helper) == []  # the helper is gone
    code, output = await agent.run_beside(cid, ABSENT_IMAGE, "true", (), helper)
    assert code == 125 and "Unable to find image" in output
