"""Tests of jupyter_cluster.core.naming: hosts, the BACKENDAI_* environment, labels."""

from __future__ import annotations

import uuid

import pytest

from jupyter_cluster.core import naming
from jupyter_cluster.core.models import Container, LaunchSpec, Session
from jupyter_cluster.core.naming import (
    cluster_env,
    container_env,
    container_labels,
    container_name,
    hostfile,
    hosts,
    network_labels,
    network_name,
    plan_containers,
    replicas,
)

SID = "0b5e8f3a-1d2c-4e5f-8a9b-0c1d2e3f4a5b"


def make_session(size: int, mode: str = "single-node", name: str | None = None) -> Session:
    spec = LaunchSpec.create(image="jupyter-cluster/kernel", size=size, mode=mode, name=name)
    return Session(id=SID, spec=spec, containers=plan_containers(SID, size))


def get(session: Session, host: str) -> Container:
    container = session.container(host)
    assert container is not None
    return container


def test_hosts() -> None:
    assert hosts(1) == ["main1"]
    assert hosts(4) == ["main1", "sub1", "sub2", "sub3"]


def test_plan_containers_roles_and_ids() -> None:
    planned = plan_containers(SID, 4)
    assert [c.host for c in planned] == ["main1", "sub1", "sub2", "sub3"]
    assert [c.role for c in planned] == ["main", "sub", "sub", "sub"]
    assert [c.idx for c in planned] == [1, 1, 2, 3]
    assert [c.local_rank for c in planned] == [0, 1, 2, 3]
    assert planned[0].kernel_id == SID
    kernel_ids = [c.kernel_id for c in planned]
    assert len(set(kernel_ids)) == 4
    for kid in kernel_ids[1:]:
        assert str(uuid.UUID(kid)) == kid
    assert all(c.agent is None and c.container_id is None for c in planned)


def test_env_of_sub2_in_a_size_4_session_is_the_design_table() -> None:
    session = make_session(4)
    sub2 = get(session, "sub2")
    assert cluster_env(session, sub2) == {
        "BACKENDAI_CLUSTER_HOST": "sub2",
        "BACKENDAI_CLUSTER_HOSTS": "main1,sub1,sub2,sub3",
        "BACKENDAI_CLUSTER_IDX": "2",
        "BACKENDAI_CLUSTER_MODE": "single-node",
        "BACKENDAI_CLUSTER_ROLE": "sub",
        "BACKENDAI_CLUSTER_SIZE": "4",
        "BACKENDAI_CLUSTER_REPLICAS": "main:1,sub:3",
        "BACKENDAI_CLUSTER_LOCAL_RANK": "2",
        "BACKENDAI_KERNEL_ID": sub2.kernel_id,
        "BACKENDAI_SESSION_ID": SID,
    }
    assert sub2.kernel_id != SID


def test_env_of_main1() -> None:
    session = make_session(4, mode="multi-node")
    env = cluster_env(session, get(session, "main1"))
    assert env["BACKENDAI_CLUSTER_HOST"] == "main1"
    assert env["BACKENDAI_CLUSTER_IDX"] == "1"
    assert env["BACKENDAI_CLUSTER_ROLE"] == "main"
    assert env["BACKENDAI_CLUSTER_LOCAL_RANK"] == "0"
    assert env["BACKENDAI_CLUSTER_MODE"] == "multi-node"
    # The session id is main1's kernel id.
    assert env["BACKENDAI_KERNEL_ID"] == env["BACKENDAI_SESSION_ID"] == SID


def test_env_of_sub1_has_idx_1() -> None:
    session = make_session(4)
    env = cluster_env(session, get(session, "sub1"))
    assert (env["BACKENDAI_CLUSTER_IDX"], env["BACKENDAI_CLUSTER_LOCAL_RANK"]) == ("1", "1")


def test_every_container_shares_the_session_values() -> None:
    session = make_session(3)
    envs = [cluster_env(session, c) for c in session.containers]
    shared = ("HOSTS", "SIZE", "REPLICAS", "MODE")
    for key in shared:
        assert len({e[f"BACKENDAI_CLUSTER_{key}"] for e in envs}) == 1
    assert {e["BACKENDAI_SESSION_ID"] for e in envs} == {SID}
    assert len({e["BACKENDAI_KERNEL_ID"] for e in envs}) == 3


def test_size_1_session() -> None:
    session = make_session(1)
    env = cluster_env(session, get(session, "main1"))
    assert env == {
        "BACKENDAI_CLUSTER_HOST": "main1",
        "BACKENDAI_CLUSTER_HOSTS": "main1",
        "BACKENDAI_CLUSTER_IDX": "1",
        "BACKENDAI_CLUSTER_MODE": "single-node",
        "BACKENDAI_CLUSTER_ROLE": "main",
        "BACKENDAI_CLUSTER_SIZE": "1",
        "BACKENDAI_CLUSTER_REPLICAS": "main:1",
        "BACKENDAI_CLUSTER_LOCAL_RANK": "0",
        "BACKENDAI_KERNEL_ID": SID,
        "BACKENDAI_SESSION_ID": SID,
    }
    assert hostfile(session) == "main1\n"


def test_replicas() -> None:
    assert replicas(make_session(1)) == "main:1"
    assert replicas(make_session(2)) == "main:1,sub:1"
    assert replicas(make_session(8)) == "main:1,sub:7"


def test_container_env_adds_user_basics() -> None:
    session = make_session(2)
    sub1 = get(session, "sub1")
    env = container_env(session, sub1)
    assert cluster_env(session, sub1).items() <= env.items()
    assert env["HOME"] == "/home/work"
    assert env["USER"] == env["LOGNAME"] == "work"
    assert env["JUPYTER_CLUSTER_HOSTFILE"] == naming.HOSTFILE_PATH
    assert "PATH" not in env  # the image's stays (Docker keeps it under ours)
    assert all(isinstance(v, str) for v in env.values())


@pytest.mark.parametrize("size", [1, 2, 4, 16])
def test_hostfile_has_one_line_per_host(size: int) -> None:
    text = hostfile(make_session(size))
    assert text.endswith("\n")
    assert text.splitlines() == hosts(size)


def test_container_labels() -> None:
    session = make_session(4, mode="multi-node", name="exp")
    sub3 = get(session, "sub3")
    assert container_labels(session, sub3, "mgr-1") == {
        naming.LABEL_SESSION: SID,
        naming.LABEL_KERNEL: sub3.kernel_id,
        naming.LABEL_HOST: "sub3",
        naming.LABEL_ROLE: "sub",
        naming.LABEL_MANAGER: "mgr-1",
        naming.LABEL_SESSION_NAME: "exp",
        naming.LABEL_MODE: "multi-node",
        naming.LABEL_SIZE: "4",
    }
    assert all(k.startswith("jupyter-cluster.") for k in container_labels(session, sub3, "m"))


def test_unnamed_session_label_uses_the_short_id() -> None:
    session = make_session(1)
    labels = container_labels(session, get(session, "main1"), "m")
    assert labels[naming.LABEL_SESSION_NAME] == SID[:8]


def test_network_labels_find_the_session() -> None:
    session = make_session(2)
    assert network_labels(session, "mgr") == {
        naming.LABEL_SESSION: SID,
        naming.LABEL_MANAGER: "mgr",
    }


def test_docker_names_are_unique_per_session_and_host() -> None:
    session = make_session(3)
    names = {container_name(session, h) for h in session.hosts}
    assert names == {f"jc-{SID[:12]}-main1", f"jc-{SID[:12]}-sub1", f"jc-{SID[:12]}-sub2"}
    assert network_name(session) == f"jc-{SID[:12]}"
    other = session.with_(id="ffffffff-1d2c-4e5f-8a9b-0c1d2e3f4a5b")
    assert container_name(other, "main1") != container_name(session, "main1")


def test_container_env_adds_backendai_session_variables() -> None:
    session = make_session(2)
    env = container_env(session, get(session, "sub1"))
    assert env["BACKENDAI_SESSION_NAME"] == session.name
    assert env["BACKENDAI_USER_NAME"] == session.owner
    assert env["BACKENDAI_KERNEL_IMAGE"] == session.spec.image
    assert env["BACKENDAI_PREOPEN_PORTS"] == ""  # no apps declared


def test_the_preopen_ports_are_the_declared_apps_ports_in_every_container() -> None:
    spec = LaunchSpec.create(image="i", size=2, apps={"tensorboard": 6006, "demo": 8765})
    session = Session(id=SID, spec=spec, containers=plan_containers(SID, 2))
    for host in ("main1", "sub1"):
        assert container_env(session, get(session, host))["BACKENDAI_PREOPEN_PORTS"] == (
            "6006,8765"
        )
