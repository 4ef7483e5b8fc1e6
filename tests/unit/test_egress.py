"""Egress rules without Docker: which ranges are denied, the script that denies them,
and the launcher applying them to every container before its start-up goes on."""

from __future__ import annotations

from pathlib import Path

import pytest
from traitlets.config import Config

from jupyter_cluster.core.egress import (
    GATE_FILE,
    HOST_CHAIN,
    READY_MARKER,
    bridge_name,
    check_denied,
    host_rules_script,
    rules_script,
)
from jupyter_cluster.core.host_guard import guard_script
from jupyter_cluster.core.naming import DEFAULT_IMAGE
from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.engine.agents.fake import FakeAgent
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.errors import ClusterError, LaunchFailed


def test_denied_ranges_are_checked_and_normalised() -> None:
    assert check_denied([" Agent ", "169.254.1.2/16", "fd00::/8", "10.0.0.1"]) == (
        "agent",
        "169.254.0.0/16",
        "fd00::/8",
        "10.0.0.1/32",
    )
    with pytest.raises(ClusterError, match="egress_deny: 'metadata' is neither"):
        check_denied(["metadata"])


def test_the_script_adds_a_prohibit_route_per_range() -> None:
    script = rules_script(("agent", "169.254.0.0/16", "fd00::/8"), ["10.1.2.3", "10.1.2.4"])
    lines = script.splitlines()
    assert lines[0] == "set -e"
    assert "ip -4 route add prohibit 169.254.0.0/16" in lines
    new = "-m conntrack --ctstate NEW -j REJECT"  # new connections only: replies pass
    assert f"iptables -w -A OUTPUT -d 10.1.2.3 {new}" in lines  # the agent's own address
    assert f"iptables -w -A OUTPUT -d 10.1.2.4 {new}" in lines  # another agent's
    assert f'[ -z "$gw" ] || iptables -w -A OUTPUT -d "$gw" {new}' in lines  # its gateway
    assert not any("prohibit 10.1.2" in line for line in lines)
    assert "[ ! -s /proc/net/if_inet6 ] || ip -6 route add prohibit fd00::/8" in lines
    loopback = rules_script(("agent",), ["127.0.0.1", "agent2.example"])
    assert "127.0.0.1" not in loopback and "agent2" not in loopback
    assert "gw=" not in rules_script(("169.254.0.0/16",), ["10.1.2.3"])


def test_the_host_chain_refuses_new_connections_from_restricted_bridges_only() -> None:
    script = host_rules_script()
    rules = f"""*filter
:{HOST_CHAIN} - [0:0]
-A {HOST_CHAIN} -m conntrack --ctstate ESTABLISHED,RELATED -j RETURN
-A {HOST_CHAIN} -p tcp -j REJECT --reject-with tcp-reset
-A {HOST_CHAIN} -j REJECT
COMMIT"""
    assert f"rules='{rules}'" in script  # replaced whole, in one transaction
    assert '"$1-restore" -w --noflush' in script
    jump = f"INPUT -i jce+ -j {HOST_CHAIN}"
    assert f'"$1" -w -C {jump} 2>/dev/null || "$1" -w -I {jump}' in script
    assert f'"$1" -w -D {jump}' in script  # duplicates from concurrent launches go
    assert script.splitlines()[-2:] == [
        "wall iptables",
        "[ ! -s /proc/net/if_inet6 ] || wall ip6tables",
    ]
    name = bridge_name("0123abcd-4567-89ef-0123-456789abcdef")
    assert name == "jce0123abcd4567" and len(name) <= 15  # Linux's limit


def manager_with(tmp_path: Path, agent: FakeAgent, **hardening: object) -> ClusterManager:
    return ClusterManager(
        db_path=str(tmp_path / "cluster.db"),
        data_root=str(tmp_path / "folders"),
        agent_factory=lambda config: agent,
        config=Config({"ContainerHardening": hardening}),
    )


async def test_every_container_gets_the_rules_before_its_start_up_goes_on(
    tmp_path: Path,
) -> None:
    agent = FakeAgent("local", ready_on_start=True)
    manager = manager_with(tmp_path, agent, restrict_egress=True)
    session = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE, size=3))
    assert session.status is SessionStatus.RUNNING
    for box in agent.containers.values():
        assert len(box.beside) == 1 and "prohibit 169.254.0.0/16" in box.beside[0]
        assert GATE_FILE in box.files and READY_MARKER in box.files
        started = agent.calls.index(("start_container", box.id))
        assert agent.calls.index(("run_beside", box.id)) > started  # its namespace exists
    await manager.terminate(session.id)


async def test_without_the_switch_nothing_is_run_beside(tmp_path: Path) -> None:
    agent = FakeAgent("local", ready_on_start=True)
    manager = manager_with(tmp_path, agent)
    session = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE, size=2))
    assert all(not box.beside and GATE_FILE not in box.files for box in agent.containers.values())
    await manager.terminate(session.id)


async def test_rules_that_cannot_be_applied_fail_the_launch_clearly(tmp_path: Path) -> None:
    agent = FakeAgent("local", ready_on_start=True)
    manager = manager_with(tmp_path, agent, restrict_egress=True, egress_image="missing:1")
    spec = manager.make_spec(image=DEFAULT_IMAGE, size=2)
    with pytest.raises(LaunchFailed, match=r"could not put the egress chain.*egress_image"):
        await manager.launch(spec)
    assert not agent.containers  # nothing left
    [failed] = await manager.list(include_ended=True)
    assert failed.status is SessionStatus.ERROR and "egress" in failed.status_reason


async def test_a_bad_range_is_refused_before_anything_is_made(tmp_path: Path) -> None:
    agent = FakeAgent("local", ready_on_start=True)
    manager = manager_with(tmp_path, agent, restrict_egress=True, egress_deny=["nowhere"])
    with pytest.raises(ClusterError, match="nowhere"):
        await manager.launch(manager.make_spec(image=DEFAULT_IMAGE))
    assert not agent.containers


async def test_a_restricted_bridge_is_walled_off_its_host_at_each_launch(tmp_path: Path) -> None:
    agent = FakeAgent("local", ready_on_start=True)
    manager = manager_with(tmp_path, agent, restrict_egress=True)
    first = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE, size=2))
    second = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE))
    egress = [s for s in agent.host_scripts if s != guard_script()]
    assert egress == [host_rules_script()] * 2  # a reboot may have reset it
    assert agent.calls.index(("run_on_host", DEFAULT_IMAGE)) < agent.calls.index(
        ("create_network", f"jc-{first.id[:12]}")
    )
    for session in (first, second):
        assert agent.bridges[f"jc-{session.id[:12]}"] == bridge_name(session.id)
        await manager.terminate(session.id)


async def test_without_the_agent_entry_no_host_chain_and_docker_names_the_bridge(
    tmp_path: Path,
) -> None:
    agent = FakeAgent("local", ready_on_start=True)
    manager = manager_with(
        tmp_path,
        agent,
        restrict_egress=True,
        egress_deny=["169.254.0.0/16"],
        guard_bridges=False,  # which names bridges too (tests/unit/test_host_guard.py)
    )
    session = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE))
    assert agent.host_scripts == [] and agent.bridges[f"jc-{session.id[:12]}"] == ""
    await manager.terminate(session.id)
