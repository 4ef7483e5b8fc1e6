"""Tests of jupyter_cluster.core.models: launch validation and the dict/record shapes."""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_cluster.core.models import ClusterMode, Container, LaunchSpec, Session
from jupyter_cluster.core.naming import plan_containers
from jupyter_cluster.core.resources import Mount, Resources, validate_folder_name
from jupyter_cluster.core.state import ContainerStatus, SessionStatus
from jupyter_cluster.errors import InvalidRequest
from tests.support.constants import GIB, IMAGE, MIB


def test_create_defaults() -> None:
    spec = LaunchSpec.create(image=IMAGE)
    assert spec == LaunchSpec(
        image=IMAGE,
        size=1,
        mode=ClusterMode.SINGLE_NODE,
        resources=Resources(cpu=1.0, mem=GIB, shm=64 * MIB, gpu=0),
        mounts=(),
        resource_group="default",
        name=None,
        bootstrap=None,
    )


def test_create_parses_every_field() -> None:
    spec = LaunchSpec.create(
        image=" my/image:1.0 ",
        size="4",
        mode="Multi-Node",
        cpu="500m",
        mem="2g",
        shm="256m",
        gpu="1",
        mounts=["data", "models:ro", Mount("scratch")],
        resource_group="gpu",
        name="train-1",
        bootstrap="pip list",
    )
    assert spec.image == "my/image:1.0"
    assert spec.size == 4
    assert spec.mode is ClusterMode.MULTI_NODE
    assert spec.resources == Resources(cpu=0.5, mem=2 * GIB, shm=256 * MIB, gpu=1)
    assert spec.mounts == (Mount("data"), Mount("models", readonly=True), Mount("scratch"))
    assert spec.resource_group == "gpu"
    assert spec.name == "train-1"
    assert spec.bootstrap == "pip list"


@pytest.mark.parametrize("size", [1, 16, "3", 2.0])
def test_create_accepts_whole_sizes(size: Any) -> None:
    assert LaunchSpec.create(image=IMAGE, size=size).size == int(size)


def test_create_max_size_is_configurable() -> None:
    assert LaunchSpec.create(image=IMAGE, size=32, max_size=32).size == 32
    with pytest.raises(InvalidRequest, match="1 to 8, got 9"):
        LaunchSpec.create(image=IMAGE, size=9, max_size=8)


def test_empty_name_and_bootstrap_mean_none() -> None:
    spec = LaunchSpec.create(image=IMAGE, name="", bootstrap="")
    assert spec.name is None
    assert spec.bootstrap is None


# (keyword arguments, expected field, words the message must contain)
BAD_INPUTS: list[tuple[dict[str, Any], str, str]] = [
    ({"image": ""}, "image", "such as jupyter-cluster/kernel"),
    ({"image": "   "}, "image", "image name"),
    ({"image": "my image"}, "image", "image name"),
    ({"image": None}, "image", "image name"),
    ({"size": 0}, "size", "1 to 16, got 0"),
    ({"size": 17}, "size", "1 to 16, got 17"),
    ({"size": -2}, "size", "1 to 16"),
    ({"size": 2.5}, "size", "not a whole number"),
    ({"size": "two"}, "size", "'two' is not a whole number"),
    ({"size": None}, "size", "not a whole number"),
    ({"size": True}, "size", "not a whole number"),
    ({"mode": "cluster"}, "mode", "use single-node or multi-node"),
    ({"mode": None}, "mode", "use single-node or multi-node"),
    ({"cpu": "lots"}, "cpu", "use a number such as 0.5"),
    ({"cpu": 0}, "cpu", "above 0"),
    ({"cpu": -1}, "cpu", "above 0"),
    ({"cpu": None}, "cpu", "not a CPU count"),
    ({"cpu": "0.0001"}, "cpu", "smallest CPU limit"),
    ({"cpu": "4e-10"}, "cpu", "smallest CPU limit"),
    ({"name": "demo\n"}, "name", "not a valid session name"),
    ({"mem": "lots"}, "mem", "e.g. 512m or 2g"),
    ({"mem": "1m"}, "mem", "at least 6m"),
    ({"mem": -5}, "mem", "negative"),
    ({"shm": "0"}, "shm", "above 0"),
    ({"shm": "big"}, "shm", "e.g. 512m or 2g"),
    ({"shm": "1t", "mem": "1g"}, "shm", "part of a container's memory: 1t is more than its 1g"),
    ({"mem": "32m"}, "shm", "64m is more than its 32m"),  # the default shm
    ({"gpu": "1.5"}, "gpu", "whole number of GPUs"),
    ({"gpu": 1.5}, "gpu", "whole number of GPUs"),
    ({"gpu": -1}, "gpu", "whole number of GPUs"),
    ({"gpu": True}, "gpu", "whole number of GPUs"),
    ({"gpu": None}, "gpu", "whole number of GPUs"),
    ({"mounts": ["../etc"]}, "mounts", "not a path"),
    ({"mounts": ["/etc"]}, "mounts", "not a path"),
    ({"mounts": ["a/b"]}, "mounts", "not a path"),
    ({"mounts": ["-data"]}, "mounts", "starting with a letter or digit"),
    ({"mounts": ["x" * 65]}, "mounts", "at most 64"),
    ({"mounts": [".ssh"]}, "mounts", "starting with a letter or digit"),
    ({"mounts": [".jupyter-cluster"]}, "mounts", "starting with a letter or digit"),
    ({"mounts": ["data:rx"]}, "mounts", "write ro or rw, e.g. data:ro"),
    ({"mounts": ["data", "data:ro"]}, "mounts", "'data' is named twice"),
    ({"mounts": "data"}, "mounts", "give a list of folder names"),
    ({"mounts": 5}, "mounts", "give a list of folder names"),
    ({"name": "my session"}, "name", "not a valid session name"),
    ({"name": "-x"}, "name", "letters, digits"),
    ({"name": "n" * 65}, "name", "at most 64"),
    ({"name": 42}, "name", "not a valid session name"),
    ({"resource_group": ""}, "resource_group", "give a resource group name"),
    ({"resource_group": None}, "resource_group", "give a resource group name"),
    ({"bootstrap": ["ls"]}, "bootstrap", "shell command as text"),
]


@pytest.mark.parametrize(
    ("kwargs", "field", "hint"), BAD_INPUTS, ids=[f"{f}-{kw!r}" for kw, f, _ in BAD_INPUTS]
)
def test_create_rejects_bad_input(kwargs: dict[str, Any], field: str, hint: str) -> None:
    kwargs = {"image": IMAGE, **kwargs}
    with pytest.raises(InvalidRequest) as info:
        LaunchSpec.create(**kwargs)
    assert info.value.field == field
    message = str(info.value)
    assert message.startswith(f"{field}: "), message
    assert hint in message


def test_mounts_none_means_no_mounts() -> None:
    assert LaunchSpec.create(image=IMAGE, mounts=None).mounts == ()  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "mount"),
    [
        ("data", Mount("data")),
        ("data:rw", Mount("data")),
        ("data:ro", Mount("data", readonly=True)),
        ("my.set_2-b", Mount("my.set_2-b")),
    ],
)
def test_mount_parse_and_str(text: str, mount: Mount) -> None:
    assert Mount.parse(text) == mount
    assert Mount.parse(str(mount)) == mount


def test_validate_folder_name_returns_name() -> None:
    assert validate_folder_name("data") == "data"
    with pytest.raises(InvalidRequest) as info:
        validate_folder_name("a..b", "folder")
    assert info.value.field == "folder"


@pytest.mark.parametrize(
    ("text", "mode"),
    [("single-node", ClusterMode.SINGLE_NODE), (" MULTI-NODE ", ClusterMode.MULTI_NODE)],
)
def test_cluster_mode_parse(text: str, mode: ClusterMode) -> None:
    assert ClusterMode.parse(text) is mode
    assert str(mode) == mode.value


def test_resources_times_and_describe() -> None:
    per = Resources(cpu=0.5, mem=512 * MIB, shm=64 * MIB, gpu=1)
    assert per.times(4) == Resources(cpu=2.0, mem=2 * GIB, shm=256 * MIB, gpu=4)
    assert per.describe() == "0.5 CPU, 512m memory, 64m shm, 1 GPU"
    assert Resources().describe() == "1 CPU, 1g memory, 64m shm"


def test_resources_dict_round_trip_and_defaults() -> None:
    per = Resources(cpu=1.5, mem=3 * GIB, shm=MIB, gpu=2)
    assert Resources.from_dict(per.to_dict()) == per
    assert Resources.from_dict({}) == Resources()


@pytest.mark.parametrize(
    "spec",
    [
        LaunchSpec.create(image=IMAGE),
        LaunchSpec.create(
            image=IMAGE,
            size=3,
            mode="multi-node",
            cpu=0.25,
            mem="768m",
            gpu=1,
            mounts=["a", "b:ro"],
            resource_group="gpu",
            name="x",
            bootstrap="echo hi",
        ),
    ],
)
def test_launch_spec_dict_round_trip(spec: LaunchSpec) -> None:
    data = spec.to_dict()
    assert data["mode"] in ("single-node", "multi-node")
    assert LaunchSpec.from_dict(data) == spec


def make_session(**changes: Any) -> Session:
    sid = "4f1c2c1e-0000-4000-8000-000000000001"
    spec = LaunchSpec.create(
        image=IMAGE, size=3, mode="multi-node", mounts=["data:ro"], name="exp", gpu=1
    )
    containers = tuple(
        c.with_(
            agent=f"agent{c.local_rank % 2}",
            status=ContainerStatus.RUNNING,
            container_id=f"cid{c.local_rank}",
            gpu_ids=(str(c.local_rank),),
        )
        for c in plan_containers(sid, 3)
    )
    base = Session(
        id=sid,
        spec=spec,
        status=SessionStatus.RUNNING,
        status_reason="all up",
        containers=containers,
        created_at=100.0,
        updated_at=150.5,
        ended_at=None,
        owner="alice",
    )
    return base.with_(**changes)


@pytest.mark.parametrize(
    "session",
    [
        make_session(),
        make_session(status=SessionStatus.TERMINATED, ended_at=200.0, owner=""),
        make_session(status=SessionStatus.PENDING, containers=(), status_reason="waiting"),
    ],
)
def test_session_record_round_trip(session: Session) -> None:
    record = session.to_record()
    assert Session.from_record(record) == session


def test_session_record_survives_json() -> None:
    import json

    session = make_session()
    assert Session.from_record(json.loads(json.dumps(session.to_record()))) == session


def test_session_public_shape() -> None:
    session = make_session()
    data = session.to_dict()
    assert data["id"] == session.id
    assert data["name"] == "exp"
    assert data["status"] == "RUNNING"
    assert data["mode"] == "multi-node"
    assert data["size"] == 3
    assert data["mounts"] == ["data:ro"]
    assert [c["host"] for c in data["containers"]] == ["main1", "sub1", "sub2"]
    assert data["containers"][1]["status"] == "RUNNING"
    assert data["containers"][1]["gpu_ids"] == ["1"]
    assert "spec" not in data
    assert session.to_record()["spec"] == session.spec.to_dict()


def test_session_helpers() -> None:
    session = make_session()
    assert session.hosts == ["main1", "sub1", "sub2"]
    sub1 = session.container("sub1")
    assert sub1 is not None and sub1.local_rank == 1
    assert session.container("sub9") is None
    unnamed = session.with_(spec=LaunchSpec.create(image=IMAGE))
    assert unnamed.name == session.id[:8]


def test_container_round_trip_and_defaults() -> None:
    c = Container(host="sub1", role="sub", idx=1, local_rank=1, kernel_id="k")
    assert Container.from_dict(c.to_dict()) == c
    minimal = {"host": "main1", "role": "main", "idx": 1, "local_rank": 0, "kernel_id": "k"}
    got = Container.from_dict(minimal)
    assert got.status is ContainerStatus.PENDING
    assert got.gpu_ids == ()
    assert got.status_reason == ""


def test_models_are_frozen() -> None:
    spec = LaunchSpec.create(image=IMAGE)
    with pytest.raises(AttributeError):
        spec.size = 2  # type: ignore[misc]
