"""Fast networking per resource group (``c.FastNetworking.resource_groups``), no Docker.

The settings are checked with messages naming the group and the key; the session
network's create body carries the MTU (bridge and overlay); RDMA device nodes, the
IPC_LOCK capability and the unlimited memlock ulimit go into a container's
HostConfig only when its agent has devices and its group asks for them; and the
launcher wires it all through the fake agent (no warm set for such groups).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from traitlets import TraitError
from traitlets.config import Config

from jupyter_cluster.core.fast_network import (
    MTU_OPTION,
    GroupNetwork,
    group_networks,
    rdma_devices,
)
from jupyter_cluster.core.naming import network_name
from jupyter_cluster.core.resources import Resources
from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.engine.agents.base import KEPT_CAPABILITIES, ContainerSpec
from jupyter_cluster.engine.agents.docker.models import container_config, network_config
from jupyter_cluster.engine.agents.fake import DEFAULT_IMAGE, FakeAgent
from jupyter_cluster.engine.fast_network import FastNetworking
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.errors import InvalidRequest

IB = "/dev/infiniband"


def test_settings_parse_per_group_with_docker_defaults_elsewhere() -> None:
    found = group_networks(
        {
            "ib": {"mtu": 9000, "rdma": True},
            "lan": {"mtu": 1400},
            "odd": {"rdma_devices": "/x/", "memlock": "64g"},
        }
    )
    assert found["ib"] == GroupNetwork(mtu=9000, rdma=True, rdma_devices=IB, memlock=-1)
    assert found["lan"] == GroupNetwork(mtu=1400) and found["lan"].special
    assert found["odd"].rdma_devices == "/x" and not found["odd"].special
    assert found["odd"].memlock == 64 * 1024**3
    assert not GroupNetwork().special
    settings = FastNetworking(config=Config({"FastNetworking": {"resource_groups": {"ib": {}}}}))
    assert settings.for_group("ib") == GroupNetwork()
    assert settings.for_group("elsewhere") == GroupNetwork()


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ({"mtu": 1400, "speed": 1}, r"\['ib'\]: unknown key\(s\) speed; known keys are mtu"),
        ({"mtu": "9000"}, r"\['ib'\]\.mtu: '9000'; give a whole number of bytes from 576"),
        ({"mtu": 100}, r"\['ib'\]\.mtu: 100;"),
        ({"mtu": 70000}, r"\['ib'\]\.mtu: 70000;.* to 65520"),
        ({"mtu": True}, r"\['ib'\]\.mtu: True"),
        ({"rdma": "yes"}, r"\['ib'\]\.rdma: 'yes'; give True or False"),
        ({"rdma_devices": "dev/ib"}, r"\['ib'\]\.rdma_devices: 'dev/ib'; give the absolute path"),
        ({"rdma_devices": "/"}, r"\['ib'\]\.rdma_devices: '/'"),
        ({"memlock": "lots"}, r"\['ib'\]\.memlock: 'lots' is not a size"),
        ({"memlock": 0}, r"\['ib'\]\.memlock: 0; give 'unlimited' or a size"),
        ([1400], r"\['ib'\]: give a dict with any of the keys mtu, rdma, rdma_devices"),
    ],
)
def test_bad_settings_name_the_group_and_the_key(entry: object, words: str) -> None:
    with pytest.raises(InvalidRequest, match=r"FastNetworking\.resource_groups" + words):
        group_networks({"ib": entry})
    with pytest.raises(TraitError, match=words):
        FastNetworking(config=Config({"FastNetworking": {"resource_groups": {"ib": entry}}}))


def test_a_group_name_must_be_a_name() -> None:
    with pytest.raises(InvalidRequest, match="is not a resource group name"):
        group_networks({"": {"mtu": 1400}})


def test_the_network_body_carries_the_mtu_for_bridge_and_overlay() -> None:
    plain = network_config("jc-a", {"k": "v"}, overlay=False, encrypted=False, mtu=0)
    assert plain == {
        "Name": "jc-a",
        "Driver": "bridge",
        "Attachable": True,
        "CheckDuplicate": True,
        "Labels": {"k": "v"},
    }
    bridge = network_config("jc-a", {}, overlay=False, encrypted=True, mtu=1400)
    assert bridge["Options"] == {MTU_OPTION: "1400"}  # encryption is an overlay's only
    overlay = network_config("jc-b", {}, overlay=True, encrypted=True, mtu=8950)
    assert overlay["Driver"] == "overlay"
    assert overlay["Options"] == {MTU_OPTION: "8950", "encrypted": "true"}


def _spec(devices: tuple[str, ...] = (), memlock: int = -1) -> ContainerSpec:
    return ContainerSpec(
        name="c",
        image=DEFAULT_IMAGE,
        hostname="main1",
        network="jc-a",
        aliases=("main1",),
        env={},
        labels={},
        resources=Resources(1, 1 << 30, 0, 0),
        command=("true",),
        devices=devices,
        memlock=memlock,
    )


def test_devices_bring_ipc_lock_and_unlimited_memlock_and_only_they_do() -> None:
    plain = container_config(_spec(), "127.0.0.1")["HostConfig"]
    assert "Devices" not in plain and "Ulimits" not in plain
    assert plain["CapAdd"] == list(KEPT_CAPABILITIES) and plain["CapDrop"] == ["ALL"]

    nodes = (f"{IB}/rdma_cm", f"{IB}/uverbs0")
    rdma = container_config(_spec(nodes), "127.0.0.1")["HostConfig"]
    assert rdma["Devices"] == [
        {"PathOnHost": n, "PathInContainer": n, "CgroupPermissions": "rwm"} for n in nodes
    ]
    assert rdma["CapAdd"] == [*KEPT_CAPABILITIES, "IPC_LOCK"]
    assert rdma["CapDrop"] == ["ALL"] and rdma["Privileged"] is False
    assert rdma["Ulimits"] == [{"Name": "memlock", "Soft": -1, "Hard": -1}]
    capped = container_config(_spec(nodes, memlock=1 << 30), "127.0.0.1")["HostConfig"]
    assert capped["Ulimits"] == [{"Name": "memlock", "Soft": 1 << 30, "Hard": 1 << 30}]
    assert "Ulimits" not in container_config(_spec((), 1 << 30), "127.0.0.1")["HostConfig"]


def test_only_the_groups_devices_under_its_directory_pass() -> None:
    found = [f"{IB}/uverbs0", f"{IB}/rdma_cm", "/dev/infinibandx/evil"]
    assert rdma_devices(GroupNetwork(rdma=True), found) == (f"{IB}/rdma_cm", f"{IB}/uverbs0")
    assert rdma_devices(GroupNetwork(rdma=False), found) == ()


def _manager(tmp_path: Path, agent: FakeAgent, groups: dict[str, object]) -> ClusterManager:
    return ClusterManager(
        db_path=str(tmp_path / "cluster.db"),
        data_root=str(tmp_path / "folders"),
        agents=[{"id": agent.id, "resource_group": agent.config.resource_group}],
        agent_factory=lambda config: agent,
        config=Config({"FastNetworking": {"resource_groups": groups}}),
    )


async def test_a_launch_in_an_rdma_group_gets_mtu_and_the_agents_devices(
    tmp_path: Path,
) -> None:
    agent = FakeAgent("ib1", resource_group="ib", ready_on_start=True)
    agent.device_paths = [f"{IB}/uverbs0", "/dev/null"]
    manager = _manager(tmp_path, agent, {"ib": {"mtu": 4000, "rdma": True, "memlock": "1g"}})
    session = await manager.launch(
        manager.make_spec(image=DEFAULT_IMAGE, size=2, resource_group="ib")
    )
    assert session.status is SessionStatus.RUNNING
    assert agent.mtus[network_name(session)] == 4000
    assert [box.spec.devices for box in agent.containers.values()] == [(f"{IB}/uverbs0",)] * 2
    assert {box.spec.memlock for box in agent.containers.values()} == {1 << 30}
    await manager.terminate(session.id)


async def test_no_devices_on_the_agent_or_no_rdma_asked_means_none(tmp_path: Path) -> None:
    bare = FakeAgent("ib1", resource_group="ib", ready_on_start=True)
    manager = _manager(tmp_path / "a", bare, {"ib": {"rdma": True}})
    session = await manager.launch(
        manager.make_spec(image=DEFAULT_IMAGE, size=2, resource_group="ib")
    )
    assert all(box.spec.devices == () for box in bare.containers.values())
    assert bare.mtus[network_name(session)] == 0
    await manager.terminate(session.id)

    plain = FakeAgent("local", ready_on_start=True)
    plain.device_paths = [f"{IB}/uverbs0"]
    other = _manager(tmp_path / "b", plain, {"ib": {"rdma": True}})
    session = await other.launch(other.make_spec(image=DEFAULT_IMAGE, size=1))
    assert all(box.spec.devices == () for box in plain.containers.values())
    assert not [c for c in plain.calls if c[0] == "device_nodes"]  # not even looked at
    await other.terminate(session.id)


async def test_a_fast_network_group_never_takes_a_warm_set(tmp_path: Path) -> None:
    agent = FakeAgent("local", ready_on_start=True, cpu=8.0)
    manager = ClusterManager(
        db_path=str(tmp_path / "cluster.db"),
        data_root=str(tmp_path / "folders"),
        agent_factory=lambda config: agent,
        warm_pool=[{"cpu": 1, "mem": "1g", "size": 2}],
        config=Config({"FastNetworking": {"resource_groups": {"default": {"mtu": 1400}}}}),
    )
    assert await manager.warm.fill() == 1
    (ready,) = manager.warm.table.ready()
    session = await manager.launch(manager.make_spec(size=2, cpu=1, mem="1g"))
    assert not {c.container_id for c in session.containers} & manager.warm.table.containers_of(
        ready.set_id
    )
    assert session.network == "" and agent.mtus[network_name(session)] == 1400
    await manager.terminate(session.id)
    await manager.warm.drain()
