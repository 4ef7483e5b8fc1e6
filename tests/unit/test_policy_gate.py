"""The local launch gate applies each owner's resource policy: the launch form's maxima,
the lifetime, the quota the store checks for REST launches and kernels, and admins'
run-time changes (which win over the configuration until removed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from traitlets import TraitError
from traitlets.config import Config

from jupyter_cluster.config import LaunchSettings
from jupyter_cluster.engine.agents.fake import FakeAgent
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.errors import Conflict, InvalidRequest, NotFound

GiB = 1024**3
POLICIES = {
    "default": {"sessions": 1, "max_cpu": 1},
    "users": {"alice": {"sessions": 3, "max_cpu": 4, "max_lifetime": "1h"}},
    "groups": {"big": {"sessions": 2, "max_cpu": 2}, "bigger": {"max_cpu": 3, "cpu": 0}},
}


def gate_with(tmp_path: Path, policies: dict[str, Any]) -> tuple[ClusterManager, Any]:
    agent = FakeAgent("local", cpu=64, mem=256 * GiB, ready_on_start=True)
    manager = ClusterManager(
        db_path=str(tmp_path / "cluster.db"),
        data_root=str(tmp_path / "folders"),
        agent_factory=lambda config: agent,
        config=Config({"ClusterManager": {"max_cpu_per_owner": 6.0}}),
    )
    settings = LaunchSettings(config=Config({"LaunchSettings": {"resource_policies": policies}}))
    return manager, manager.launch_gate(settings)


def test_wrong_policies_are_refused_at_start() -> None:
    with pytest.raises(TraitError, match=r"users.bob: max_gpu: expected a whole number"):
        LaunchSettings(resource_policies={"users": {"bob": {"max_gpu": -1}}})


async def test_each_owner_gets_their_policy(tmp_path: Path) -> None:
    manager, gate = gate_with(tmp_path, POLICIES)
    try:
        with pytest.raises(InvalidRequest, match="at most 1 CPUs"):
            gate.admit({"cpu": 2}, "bob")
        admitted = gate.admit({"cpu": 3}, "bob", ["big", "bigger"])  # the most generous
        assert admitted.quota.sessions == 2 and admitted.quota.cpu == 0  # no total for bigger
        admitted = gate.admit({"cpu": 4}, "alice", ["big"])  # her own entry wins
        assert admitted.spec.max_lifetime == 3600  # the policy's lifetime when none asked
        with pytest.raises(InvalidRequest, match="at most 1h"):
            gate.admit({"max_lifetime": "2h"}, "alice")
        assert gate.admit({}, "carl").quota.cpu == 6.0  # the site's total by default
        form = await gate.options("alice")
        assert form["limits"]["max_cpu"] == 4
        assert (await gate.options("bob", ["big"]))["limits"]["max_cpu"] == 2

        # a kernel's launch: the same quota, checked by the store on insert
        spec = manager.make_spec(image=admitted.spec.image, cpu=2)
        for _ in range(2):
            await manager.submit(spec, owner="bob", quota=gate.quota("bob", ["big"]))
        with pytest.raises(Conflict, match="at most 1 CPUs per container"):
            await manager.submit(spec, owner="bob", quota=gate.quota("bob"))
        with pytest.raises(Conflict, match="limit is 2"):
            await manager.submit(spec, owner="bob", quota=gate.quota("bob", ["big"]))
    finally:
        await manager.close()


async def test_admins_changes_win_until_removed(tmp_path: Path) -> None:
    manager, gate = gate_with(tmp_path, POLICIES)
    try:
        entry = gate.set_limits("users", "alice", {"max_cpu": 8, "max_gpu": 1})
        assert entry["configured"]["max_cpu"] == 4 and entry["changed"] == {
            "max_cpu": 8,
            "max_gpu": 1,
        }
        assert entry["effective"]["max_cpu"] == 8 and entry["effective"]["sessions"] == 3
        assert gate.resource_policy("alice").policy.max_gpu == 1
        gate.set_limits("groups", "new", {"max_cpu": 5})
        assert gate.resource_policy("dan", ["new"]).source == "groups new"
        with pytest.raises(InvalidRequest, match="max_cpu"):
            gate.set_limits("users", "alice", {"max_cpu": "x"})
        gate.remove_limits("users", "alice")
        assert gate.resource_policy("alice").policy.max_cpu == 4
        with pytest.raises(NotFound):
            gate.remove_limits("users", "alice")
    finally:
        await manager.close()


async def test_without_policies_nothing_changes(tmp_path: Path) -> None:
    manager, gate = gate_with(tmp_path, {})
    try:
        policy = gate.resource_policy("anyone")
        assert policy.source == "default" and policy.policy.max_cpu == 8.0  # ClusterApp.max_cpu
        assert policy.policy.sessions == 8 and policy.policy.cpu == 6.0
        assert gate.admit({}, "anyone").spec.max_lifetime is None
    finally:
        await manager.close()


async def test_a_launch_asks_for_a_priority_within_its_range(tmp_path: Path) -> None:
    manager, gate = gate_with(tmp_path, {"groups": {"urgent": {"priority": 1, "max_priority": 3}}})
    try:
        assert gate.admit({}, "bob", ["urgent"]).spec.priority == 1  # the policy's own
        assert gate.admit({"priority": 3}, "bob", ["urgent"]).spec.priority == 3
        with pytest.raises(InvalidRequest, match="0 to 3"):
            gate.admit({"priority": 4}, "bob", ["urgent"])
        with pytest.raises(InvalidRequest, match="0 to 0"):
            gate.admit({"priority": 1}, "bob")
        assert gate.admit({}, "bob").spec.priority == 0
    finally:
        await manager.close()


async def test_the_idle_timeout_is_the_policys_for_the_groups_last_seen(tmp_path: Path) -> None:
    manager, gate = gate_with(tmp_path, {"groups": {"quick": {"idle_timeout": "10m"}}})
    try:
        assert gate.idle_timeout("bob") is None  # none set: the site's applies
        gate.admit({}, "bob", ["quick"])
        assert gate.idle_timeout("bob") == 600 and gate.idle_timeout("bob", []) is None
    finally:
        await manager.close()
