"""Host-network resource groups (``host_network`` in ``c.FastNetworking.resource_groups``),
no Docker: the setting is checked, the scheduler puts one container per agent and
needs no Swarm, a container's create body uses Docker's host network with its
peers in ``/etc/hosts``, its state reports the agent's own ports, and a launch
through the fake agents makes no session network and refuses what cannot work.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from traitlets.config import Config

from jupyter_cluster.core.fast_network import GroupNetwork, group_networks
from jupyter_cluster.core.host_network import peer_hosts
from jupyter_cluster.core.models import LaunchSpec
from jupyter_cluster.core.naming import KERNEL_PORTS, SSH_PORT, kernel_sockets, network_name
from jupyter_cluster.core.resources import Resources
from jupyter_cluster.core.scheduler import AgentSlot, Pending, Placement, place
from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.engine.agents.base import ContainerSpec
from jupyter_cluster.engine.agents.docker.models import container_config, container_state
from jupyter_cluster.engine.agents.fake import DEFAULT_IMAGE, FakeAgent
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.errors import InvalidRequest, LaunchFailed
from jupyter_cluster.reach.ports import kernel_side_connection

GIB = 1024**3


def test_the_setting_is_checked_and_makes_the_group_special() -> None:
    found = group_networks({"hpc": {"host_network": True, "rdma": True}})
    assert found["hpc"] == GroupNetwork(rdma=True, host_network=True) and found["hpc"].special
    with pytest.raises(InvalidRequest, match=r"\['hpc'\]\.host_network: 'yes'; give True"):
        group_networks({"hpc": {"host_network": "yes"}})
    with pytest.raises(InvalidRequest, match=r"\['hpc'\]\.mtu: a host-network group uses"):
        group_networks({"hpc": {"host_network": True, "mtu": 9000}})


def _slot(agent_id: str, *, containers: int = 0, swarm: str = "") -> AgentSlot:
    return AgentSlot(
        id=agent_id,
        resource_group="hpc",
        capacity=Resources(cpu=8, mem=16 * GIB, shm=0, gpu=0),
        used=Resources(cpu=containers, mem=containers * GIB, shm=0, gpu=0),
        one_container=True,
        containers=containers,
        swarm=swarm,
    )


def _spec(size: int, mode: str = "multi-node") -> LaunchSpec:
    return LaunchSpec.create(
        image="img", size=size, mode=mode, cpu=1, mem="1g", resource_group="hpc"
    )


def test_one_container_per_agent_without_any_swarm() -> None:
    found = place(_spec(3), [_slot("a"), _slot("b"), _slot("c"), _slot("d")])
    assert isinstance(found, Placement)
    assert len(set(found.agents)) == 3  # each on its own agent, no Swarm in sight


def test_an_agent_holding_any_container_is_skipped_and_the_reason_says_so() -> None:
    found = place(_spec(2), [_slot("a", containers=1), _slot("b"), _slot("c")])
    assert isinstance(found, Placement) and sorted(found.agents) == ["b", "c"]
    waiting = place(_spec(2), [_slot("a", containers=1), _slot("b")])
    assert isinstance(waiting, Pending)
    assert "a runs a host-network container" in waiting.reason
    assert "b has 8 CPU" in waiting.reason


def test_sizes_a_host_network_group_can_never_hold_are_refused() -> None:
    with pytest.raises(InvalidRequest, match="one per agent; a single-node session there has one"):
        place(_spec(2, "single-node"), [_slot("a"), _slot("b")])
    with pytest.raises(InvalidRequest, match=r"one container per agent .* has 2 agent\(s\); ask"):
        place(_spec(3), [_slot("a"), _slot("b")])
    assert isinstance(place(_spec(1, "single-node"), [_slot("a")]), Placement)


def _container_spec() -> ContainerSpec:
    return ContainerSpec(
        name="c",
        image=DEFAULT_IMAGE,
        hostname="sub1",
        network="host",
        aliases=(),
        env={},
        labels={},
        resources=Resources(1, GIB, 0, 0),
        command=("true",),
        extra_hosts=("main1:10.0.0.1", "sub1:10.0.0.2"),
    )


def test_the_create_body_uses_the_host_network_with_peers_in_etc_hosts() -> None:
    body = container_config(_container_spec(), "10.0.0.2")
    assert body["HostConfig"]["NetworkMode"] == "host"
    assert body["HostConfig"]["ExtraHosts"] == ["main1:10.0.0.1", "sub1:10.0.0.2"]
    assert body["HostConfig"]["PortBindings"] == {} and body["ExposedPorts"] == {}
    assert body["NetworkingConfig"] == {"EndpointsConfig": {}}  # no aliases there
    assert body["Hostname"] == "sub1"


def test_a_host_network_containers_ports_are_the_agents_own() -> None:
    state = container_state(
        {"Id": "x", "HostConfig": {"NetworkMode": "host"}, "NetworkSettings": {"Ports": {}}}
    )
    assert state.host_network
    assert state.ports[SSH_PORT] == ("", SSH_PORT)
    assert [state.ports[p][1] for p in KERNEL_PORTS] == list(KERNEL_PORTS)
    bridged = container_state({"Id": "y", "HostConfig": {"NetworkMode": "jc-a"}})
    assert not bridged.host_network and bridged.ports == {}


def test_the_kernel_listens_where_it_is_told() -> None:
    kernel_id = "0f9b8a4e-3c2d-4b1a-9e8f-7d6c5b4a3921"
    km = SimpleNamespace(
        session=SimpleNamespace(key=b"k", signature_scheme="hmac-sha256"), kernel_id=kernel_id
    )
    direct = json.loads(kernel_side_connection(km, "direct"))
    assert (direct["transport"], direct["ip"]) == ("tcp", "0.0.0.0")
    assert json.loads(kernel_side_connection(km, "direct", "10.0.0.1"))["ip"] == "10.0.0.1"
    # Over SSH: Unix sockets in main1's run directory, so a host-network main1 opens
    # no TCP port on its agent host.
    over_ssh = json.loads(kernel_side_connection(km, "ssh"))
    assert over_ssh["transport"] == "ipc"
    assert over_ssh["ip"] == f"/opt/jupyter-cluster/run/kernel-{kernel_id}"
    sockets = kernel_sockets(kernel_id)
    assert sockets[0] == f"{over_ssh['ip']}-{over_ssh['shell_port']}"
    assert len(sockets) == len(KERNEL_PORTS) and all(len(p) < 100 for p in sockets)


def _manager(tmp_path: Path, agents: list[FakeAgent], **config: object) -> ClusterManager:
    by_id = {a.id: a for a in agents}
    return ClusterManager(
        db_path=str(tmp_path / "cluster.db"),
        data_root=str(tmp_path / "folders"),
        agents=[{"id": a.id, "resource_group": "hpc", "address": a.config.address} for a in agents],
        agent_factory=lambda c: by_id[c.id],
        config=Config(
            {"FastNetworking": {"resource_groups": {"hpc": {"host_network": True}}}, **config}
        ),
    )


def _agents(*addresses: str) -> list[FakeAgent]:
    return [
        FakeAgent(f"n{i}", resource_group="hpc", address=address, ready_on_start=True)
        for i, address in enumerate(addresses, 1)
    ]


async def test_a_launch_spans_agents_on_their_own_networks(tmp_path: Path) -> None:
    agents = _agents("10.0.0.1", "10.0.0.2")
    manager = _manager(tmp_path, agents)
    session = await manager.launch(
        manager.make_spec(image=DEFAULT_IMAGE, size=2, mode="multi-node", resource_group="hpc")
    )
    assert session.status is SessionStatus.RUNNING
    assert {c.agent for c in session.containers} == {"n1", "n2"}
    specs = [box.spec for a in agents for box in a.containers.values()]
    assert {s.network for s in specs} == {"host"} and {s.publish for s in specs} == {()}
    peers = {
        c.host: {"n1": "10.0.0.1", "n2": "10.0.0.2"}[c.agent or ""] for c in session.containers
    }
    assert {s.extra_hosts for s in specs} == {tuple(f"{h}:{a}" for h, a in peers.items())}
    assert all(network_name(session) not in {n.name for n in a.networks.values()} for a in agents)
    await manager.terminate(session.id)
    assert not any(a.containers for a in agents)


async def test_across_agents_a_loopback_address_fails_clearly_with_nothing_left(
    tmp_path: Path,
) -> None:
    agents = _agents("127.0.0.1", "10.0.0.2")
    manager = _manager(tmp_path, agents)
    spec = manager.make_spec(image=DEFAULT_IMAGE, size=2, mode="multi-node", resource_group="hpc")
    with pytest.raises(LaunchFailed, match=r"n1 has '127\.0\.0\.1'; set `address` of those"):
        await manager.launch(spec)
    assert not any(a.containers for a in agents)


async def test_restricted_egress_cannot_apply_there_and_is_refused(tmp_path: Path) -> None:
    agents = _agents("10.0.0.1")
    manager = _manager(tmp_path, agents, ContainerHardening={"restrict_egress": True})
    spec = manager.make_spec(image=DEFAULT_IMAGE, size=1, resource_group="hpc")
    with pytest.raises(InvalidRequest, match=r"egress restrictions .* cannot apply"):
        await manager.launch(spec)


def test_one_agent_reaches_itself_on_loopback() -> None:
    session = SimpleNamespace(containers=[SimpleNamespace(host="main1", agent="n1")])
    assert peer_hosts(session, {"n1": "127.0.0.1"}) == ("main1:127.0.0.1",)  # type: ignore[arg-type]
