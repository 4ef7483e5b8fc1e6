"""Tests of the in-memory FakeAgent that the manager's unit tests rely on."""

from __future__ import annotations

import asyncio

import pytest

from jupyter_cluster.core.resources import Resources
from jupyter_cluster.engine.agents.base import Agent, ContainerSpec, FileEntry
from jupyter_cluster.engine.agents.fake import DEFAULT_IMAGE, ExecCall, FakeAgent, FakeContainer
from jupyter_cluster.errors import AgentError


def cspec(host: str, session: str = "s1", **changes: object) -> ContainerSpec:
    fields: dict[str, object] = {
        "name": f"jc-{session}-{host}",
        "image": DEFAULT_IMAGE,
        "hostname": host,
        "network": f"jc-{session}",
        "aliases": (host,),
        "env": {"BACKENDAI_CLUSTER_HOST": host},
        "labels": {"jupyter-cluster.session-id": session, "jupyter-cluster.host": host},
        "resources": Resources(),
        "command": ("/opt/start.sh",),
        "publish": (8888, 2200) if host == "main1" else (),
    }
    fields.update(changes)
    return ContainerSpec(**fields)  # type: ignore[arg-type]


async def started(agent: FakeAgent, host: str, session: str = "s1") -> str:
    cid = await agent.create_container(cspec(host, session))
    await agent.start_container(cid)
    return cid


def test_is_an_agent() -> None:
    agent: Agent = FakeAgent("a1")
    assert agent.id == "a1"


async def test_info_reports_configured_capacity() -> None:
    agent = FakeAgent("a1", resource_group="gpu", cpu=8, mem=16 * 1024**3, gpus=("0", "1"))
    info = await agent.info()
    assert info.id == "a1" and info.resource_group == "gpu"
    assert info.capacity == Resources(cpu=8, mem=16 * 1024**3, shm=0, gpu=2)
    assert info.gpu_ids == ("0", "1")
    assert info.reachable
    agent.reachable = False
    down = await agent.info()
    assert not down.reachable and "down" in down.message


async def test_has_image() -> None:
    agent = FakeAgent(images=("img:1", "other"))
    assert await agent.has_image("img:1")
    assert await agent.has_image("other:latest") is False
    assert await agent.has_image("other")
    agent.images.add("new")
    assert await agent.has_image("new")


async def test_networks_by_labels() -> None:
    agent = FakeAgent()
    bridge = await agent.create_network(
        "jc-s1", {"jupyter-cluster.session-id": "s1"}, overlay=False
    )
    await agent.create_network("jc-s2", {"jupyter-cluster.session-id": "s2"}, overlay=True)
    with pytest.raises(AgentError, match="already exists"):
        await agent.create_network("jc-s1", {}, overlay=False)
    found = await agent.list_networks({"jupyter-cluster.session-id": "s1"})
    assert [(n.id, n.name, n.driver) for n in found] == [(bridge, "jc-s1", "bridge")]
    assert len(await agent.list_networks({})) == 2
    await agent.remove_network("jc-s2")
    await agent.remove_network(bridge)
    await agent.remove_network("missing")
    assert agent.networks == {}


async def test_container_life_cycle() -> None:
    agent = FakeAgent(address="127.0.0.1")
    cid = await agent.create_container(cspec("main1"))
    state = await agent.inspect_container(cid)
    assert state is not None and state.status == "created" and not state.running
    await agent.start_container(cid)
    state = await agent.inspect_container(cid)
    assert state is not None and state.running and state.name == "jc-s1-main1"
    assert set(state.ports) == {8888, 2200}
    assert all(host == "127.0.0.1" and port > 0 for host, port in state.ports.values())
    agent.exit(cid, 137)
    state = await agent.inspect_container(cid)
    assert state is not None and state.status == "exited" and state.exit_code == 137
    await agent.remove_container(cid)
    assert await agent.inspect_container(cid) is None
    await agent.remove_container(cid)  # a missing one is fine


async def test_create_checks_image_and_name() -> None:
    agent = FakeAgent()
    with pytest.raises(AgentError, match="no such image"):
        await agent.create_container(cspec("main1", image="nope"))
    await agent.create_container(cspec("main1"))
    with pytest.raises(AgentError, match="in use"):
        await agent.create_container(cspec("main1"))


async def test_list_containers_honours_labels() -> None:
    agent = FakeAgent()
    await started(agent, "main1", "s1")
    await agent.create_container(cspec("sub1", "s1"))
    await started(agent, "main1", "s2")
    s1 = await agent.list_containers({"jupyter-cluster.session-id": "s1"})
    assert sorted(c.labels["jupyter-cluster.host"] for c in s1) == ["main1", "sub1"]
    both = {"jupyter-cluster.session-id": "s2", "jupyter-cluster.host": "main1"}
    assert [c.name for c in await agent.list_containers(both)] == ["jc-s2-main1"]
    assert await agent.list_containers({"jupyter-cluster.session-id": "s3"}) == []
    assert len(await agent.list_containers({})) == 3


async def test_put_files_are_recorded() -> None:
    agent = FakeAgent()
    cid = await agent.create_container(cspec("sub1"))
    key = FileEntry("/home/work/.ssh/id_ed25519", b"secret", mode=0o600, uid=1000, gid=1000)
    await agent.put_files(cid, [key, FileEntry("/etc/hostfile", b"main1\nsub1\n")])
    assert agent.by_host("sub1").files[key.path] == key
    assert agent.by_host("sub1").files["/etc/hostfile"].content == b"main1\nsub1\n"
    with pytest.raises(AgentError, match="no such container"):
        await agent.put_files("missing", [key])


async def test_fail_on_method_name() -> None:
    agent = FakeAgent()
    agent.fail_on["create_network"] = AgentError("boom", "fake")
    with pytest.raises(AgentError, match="boom"):
        await agent.create_network("n", {}, overlay=False)
    del agent.fail_on["create_network"]
    await agent.create_network("n", {}, overlay=False)


async def test_fail_on_hostname_fails_that_create_only() -> None:
    agent = FakeAgent()
    agent.fail_on["sub2"] = AgentError("no room for sub2", "fake")
    await agent.create_container(cspec("sub1"))
    with pytest.raises(AgentError, match="sub2"):
        await agent.create_container(cspec("sub2"))
    assert [c.spec.hostname for c in agent.containers.values()] == ["sub1"]
    assert ("create_container", "jc-s1-sub2") in agent.calls


async def test_fail_on_start_of_one_host() -> None:
    agent = FakeAgent()
    agent.fail_on["start_container:sub1"] = RuntimeError("start failed")
    await started(agent, "main1")
    cid = await agent.create_container(cspec("sub1"))
    with pytest.raises(RuntimeError):
        await agent.start_container(cid)
    assert agent.containers[cid].status == "created"


async def test_unreachable_agent_fails_every_call() -> None:
    agent = FakeAgent()
    agent.reachable = False
    with pytest.raises(AgentError, match="cannot reach"):
        await agent.list_containers({})
    with pytest.raises(AgentError):
        await agent.create_container(cspec("main1"))


async def collect(agent: FakeAgent, cid: str, **kw: object) -> list[str]:
    return [line async for line in agent.logs(cid, **kw)]  # type: ignore[arg-type]


async def test_logs_and_tail() -> None:
    agent = FakeAgent()
    cid = await started(agent, "main1")
    for i in range(5):
        agent.emit(cid, f"line {i}")
    assert await collect(agent, cid) == [f"line {i}\n" for i in range(5)]
    assert await collect(agent, cid, tail=2) == ["line 3\n", "line 4\n"]
    assert await collect(agent, cid, tail=0) == []
    with pytest.raises(AgentError):
        await collect(agent, "missing")


async def test_follow_streams_until_exit() -> None:
    agent = FakeAgent()
    cid = await started(agent, "main1")
    agent.emit(cid, "old\n")
    reader = asyncio.create_task(collect(agent, cid, follow=True, tail=0))
    await asyncio.sleep(0)
    agent.emit(cid, "one")
    await asyncio.sleep(0)
    agent.emit(cid, "two")
    agent.exit(cid)
    assert await asyncio.wait_for(reader, 1) == ["one\n", "two\n"]


async def test_follow_ends_when_removed_and_serves_many_readers() -> None:
    agent = FakeAgent()
    cid = await started(agent, "sub1")
    readers = [asyncio.create_task(collect(agent, cid, follow=True)) for _ in range(2)]
    await asyncio.sleep(0)
    agent.emit(cid, "hello")
    await asyncio.sleep(0)
    await agent.remove_container(cid)
    assert await asyncio.wait_for(asyncio.gather(*readers), 1) == [["hello\n"]] * 2


async def test_exec_records_calls_and_streams_output() -> None:
    agent = FakeAgent()
    cid = await started(agent, "sub1")

    def handler(box: FakeContainer, call: ExecCall) -> tuple[int, bytes]:
        return (3, f"{box.spec.hostname}:{' '.join(call.cmd)}".encode())

    agent.exec_handler = handler
    chunks: list[tuple[int, bytes]] = []

    async def on_output(stream: int, data: bytes) -> None:
        chunks.append((stream, data))

    code = await agent.exec(cid, ["echo", "hi"], env={"A": "1"}, on_output=on_output)
    assert code == 3
    assert chunks == [(1, b"sub1:echo hi")]
    assert agent.execs == [ExecCall(cid, ("echo", "hi"), "work", "/home/work", {"A": "1"})]
    sync_chunks: list[bytes] = []
    await agent.exec(cid, ["id"], user="root", on_output=lambda s, d: sync_chunks.append(d))
    assert sync_chunks == [b"sub1:id"]
    assert agent.execs[-1].user == "root"


async def test_exec_default_and_not_running() -> None:
    agent = FakeAgent()
    cid = await started(agent, "main1")
    assert await agent.exec(cid, ["true"]) == 0
    agent.exit(cid, 1)
    with pytest.raises(AgentError, match="not running"):
        await agent.exec(cid, ["true"])


async def test_close_keeps_state() -> None:
    agent = FakeAgent()
    await started(agent, "main1")
    await agent.close()
    assert agent.closed and len(agent.containers) == 1
