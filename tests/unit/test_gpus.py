"""GPUs without Docker: reading ``nvidia-smi``'s list, when to probe, the pin rule,
what a container is told (Backend.AI's ``GPU_COUNT``/``N_GPUS``, the hostfile's
``slots=N``) and the device request Docker is sent; the settings that configure it;
and a session launched on the fake agent with GPUs pinned, end to end.

Canned ``nvidia-smi --query-gpu=index,uuid,name,memory.total --format=csv,noheader``
output stands in for a GPU machine (none of these tests needs one, nor Docker).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_cluster.cli.format import agents_table
from jupyter_cluster.core import naming
from jupyter_cluster.core.gpus import (
    NVIDIA_SMI_LIST,
    GpuDevice,
    GpuProbe,
    gpu_env,
    parse_gpu_list,
    parse_memory,
    pinned,
    probe_outcome,
    wants_probe,
)
from jupyter_cluster.core.models import LaunchSpec, Session
from jupyter_cluster.core.resources import Resources
from jupyter_cluster.engine.agents.base import ContainerSpec
from jupyter_cluster.engine.agents.docker.gpus import probe_body
from jupyter_cluster.engine.agents.docker.models import container_config
from jupyter_cluster.engine.agents.fake import DEFAULT_IMAGE as FAKE_IMAGE
from jupyter_cluster.engine.agents.fake import FakeAgent
from jupyter_cluster.engine.agents.registry import agent_configs
from jupyter_cluster.engine.gpu_detection import GpuDetection
from jupyter_cluster.errors import InvalidRequest

from .engine_parts import build

GIB = 1 << 30
#: Four GPUs of a DGX-like machine, as nvidia-smi prints them (units included).
FOUR = """0, GPU-5a1c0f5e-3b0d-4c55-9a4e-1f0e7c3d2b10, NVIDIA A100-SXM4-80GB, 81920 MiB
1, GPU-6b2d1a6f-4c1e-5d66-8b5f-2a1f8d4e3c21, NVIDIA A100-SXM4-80GB, 81920 MiB
2, GPU-7c3e2b7a-5d2f-6e77-9c6a-3b2a9e5f4d32, NVIDIA A100-SXM4-80GB, 81920 MiB
3, GPU-8d4f3c8b-6e3a-7f88-8d7b-4c3b0f6a5e43, NVIDIA A100-SXM4-80GB, 81920 MiB
"""
SID = "0b5e8f3a-1d2c-4e5f-8a9b-0c1d2e3f4a5b"


def test_the_probe_asks_for_index_uuid_name_and_memory_in_csv() -> None:
    assert NVIDIA_SMI_LIST == (
        "nvidia-smi",
        "--query-gpu=index,uuid,name,memory.total",
        "--format=csv,noheader",
    )


def test_four_gpus_are_read_with_their_ids_models_and_memory() -> None:
    devices, bad = parse_gpu_list(FOUR)
    assert bad == []
    assert [d.index for d in devices] == ["0", "1", "2", "3"]
    assert devices[0] == GpuDevice(
        "0", "GPU-5a1c0f5e-3b0d-4c55-9a4e-1f0e7c3d2b10", "NVIDIA A100-SXM4-80GB", 80 * GIB
    )
    report = probe_outcome(0, FOUR)
    assert report.ids == ("0", "1", "2", "3") and report.note == ""
    assert report.devices == devices


def test_memory_with_or_without_units_and_not_reported() -> None:
    assert parse_memory("81920 MiB") == 80 * GIB
    assert parse_memory("81920") == 80 * GIB  # --format=csv,noheader,nounits
    assert parse_memory("16 GiB") == 16 * GIB
    assert parse_memory("[N/A]") is None
    assert parse_memory("12 parsecs") is None
    assert parse_memory("-1 MiB") is None
    (device,), bad = parse_gpu_list("0, GPU-aa, Tesla T4, [N/A]\n")
    assert bad == [] and device.memory == 0 and device.name == "Tesla T4"


def test_a_model_name_with_commas_and_blank_lines() -> None:
    devices, bad = parse_gpu_list("\n0, GPU-aa, Odd, Inc. Card, 1024 MiB\n\n")
    assert bad == [] and [(d.index, d.name, d.memory) for d in devices] == [
        ("0", "Odd, Inc. Card", 1 << 30)
    ]


@pytest.mark.parametrize(
    "line",
    [
        "No devices were found",
        "0, GPU-aa, 1024 MiB",  # a field missing
        "x, GPU-aa, Tesla T4, 15360 MiB",  # not an index
        "-1, GPU-aa, Tesla T4, 15360 MiB",
        "1, , Tesla T4, 15360 MiB",  # no UUID
        "0, GPU-dup, Tesla T4, 15360 MiB",  # index 0 twice
    ],
)
def test_malformed_lines_are_not_gpus_and_are_reported(line: str) -> None:
    text = "0, GPU-aa, Tesla T4, 15360 MiB\n" + line + "\n"
    report = probe_outcome(0, text)
    assert report.ids == ("0",)
    assert "1 line(s) that are not GPUs" in report.note and line.strip()[:20] in report.note


def test_a_failed_or_empty_run_offers_no_gpu_and_says_why() -> None:
    driver = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."
    failed = probe_outcome(9, "", driver + "\nMake sure that the latest driver is installed.")
    assert failed.ids == () and failed.devices == ()
    assert failed.note == f"GPU detection failed (nvidia-smi exit code 9): {driver}"
    missing = probe_outcome(127, "", "")
    assert missing.ids == () and "exit code 127" in missing.note
    assert probe_outcome(0, "").note == "nvidia-smi listed no GPU"
    garbage = probe_outcome(0, "\x1b[31mSegmentation fault\n")
    assert garbage.ids == () and "not GPUs" in garbage.note


def test_only_engines_with_the_nvidia_runtime_are_probed_by_default() -> None:
    nvidia = {"runc": {"path": "runc"}, "nvidia": {"path": "nvidia-container-runtime"}}
    plain = {"runc": {"path": "runc"}, "io.containerd.runc.v2": {"path": "runc"}}
    assert wants_probe("auto", nvidia) and wants_probe("", nvidia)
    assert not wants_probe("auto", plain) and not wants_probe("auto", None)
    assert wants_probe("always", plain) and wants_probe("always", None)
    assert not wants_probe("never", nvidia)


def test_a_configured_list_wins() -> None:
    report = pinned(("2", "3"))
    assert report is not None and report.ids == ("2", "3") and report.devices == ()
    assert pinned(()) is None


def test_the_gpu_variables_are_backend_ai_s() -> None:
    assert gpu_env(0) == {"GPU_COUNT": "0", "N_GPUS": "0"}
    assert gpu_env(2) == {"GPU_COUNT": "2", "N_GPUS": "2", "GPU_TYPE": "cuda"}


def gpu_session(size: int, per_container: int) -> Session:
    """A placed session whose containers hold ``per_container`` GPUs each (distinct)."""
    spec = LaunchSpec.create(image="img", size=size, gpu=per_container)
    planned = naming.plan_containers(SID, size)
    ids = iter(str(i) for i in range(size * per_container))
    containers = tuple(
        c.with_(agent="a", gpu_ids=tuple(next(ids) for _ in range(per_container))) for c in planned
    )
    return Session(id=SID, spec=spec, containers=containers)


def test_every_container_is_told_how_many_gpus_it_holds() -> None:
    session = gpu_session(3, 2)
    for container in session.containers:
        env = naming.container_env(session, container)
        assert (env["GPU_COUNT"], env["N_GPUS"], env["GPU_TYPE"]) == ("2", "2", "cuda")
    plain = gpu_session(2, 0)
    env = naming.container_env(plain, plain.containers[1])
    assert (env["GPU_COUNT"], env["N_GPUS"]) == ("0", "0") and "GPU_TYPE" not in env


def test_the_hostfile_gives_each_gpu_host_one_slot_per_gpu() -> None:
    assert naming.hostfile(gpu_session(3, 2)) == "main1 slots=2\nsub1 slots=2\nsub2 slots=2\n"
    assert naming.hostfile(gpu_session(1, 4)) == "main1 slots=4\n"
    assert naming.hostfile(gpu_session(2, 0)) == "main1\nsub1\n"  # as before: no slots


def cspec(gpu_ids: tuple[str, ...]) -> ContainerSpec:
    return ContainerSpec(
        name="jc-x-sub1",
        image="img",
        hostname="sub1",
        network="net",
        aliases=("sub1",),
        env={"A": "1"},
        labels={},
        resources=Resources(cpu=1, mem=1 << 30, shm=0, gpu=len(gpu_ids)),
        command=("/start",),
        gpu_ids=gpu_ids,
    )


def test_docker_is_asked_for_exactly_the_containers_gpus() -> None:
    body = container_config(cspec(("1", "3")), "127.0.0.1")
    assert body["HostConfig"]["DeviceRequests"] == [
        {"Driver": "nvidia", "DeviceIDs": ["1", "3"], "Capabilities": [["gpu"]]}
    ]
    assert "NVIDIA_VISIBLE_DEVICES=1,3" in body["Env"]
    assert "Runtime" not in body["HostConfig"]  # the engine's default runtime
    none = container_config(cspec(()), "127.0.0.1")
    assert "DeviceRequests" not in none["HostConfig"]
    assert "NVIDIA_VISIBLE_DEVICES=void" in none["Env"]  # an nvidia default runtime shows none


def test_the_probe_container_sees_every_gpu_without_network() -> None:
    body = probe_body(GpuProbe(image="img:1", runtime="nvidia"), "gpu1")
    assert [body["Entrypoint"][0], *body["Cmd"]] == list(NVIDIA_SMI_LIST)
    assert body["Image"] == "img:1" and body["HostConfig"]["Runtime"] == "nvidia"
    assert "NVIDIA_VISIBLE_DEVICES=all" in body["Env"]
    assert body["HostConfig"]["NetworkMode"] == "none" and body["NetworkDisabled"] is True
    assert body["Labels"] == {"jupyter-cluster.gpu-probe": "gpu1"}
    assert probe_body(GpuProbe(), "a")["Image"] == naming.DEFAULT_IMAGE


def test_an_agents_detect_gpus_key(tmp_path: Path) -> None:
    raw = [
        {"id": "a"},
        {"id": "b", "detect_gpus": True},
        {"id": "c", "detect_gpus": False},
        {"id": "d", "detect_gpus": "auto", "gpus": [0, 1]},
    ]
    modes = [c.gpu_probe.mode for c in agent_configs(raw, str(tmp_path))]
    assert modes == ["", "always", "never", "auto"]
    assert agent_configs(raw, str(tmp_path))[3].gpus == ("0", "1")
    with pytest.raises(InvalidRequest, match="detect_gpus: 'sometimes'"):
        agent_configs([{"id": "x", "detect_gpus": "sometimes"}], str(tmp_path))


def test_the_engine_wide_settings_and_an_agents_own_mode() -> None:
    settings = GpuDetection(runtime="runc", timeout=3.0, retry_interval=9.0)
    assert settings.probe("", "kernel:1") == GpuProbe("auto", "kernel:1", "runc", 3.0, 9.0)
    assert settings.probe("never", "kernel:1").mode == "never"
    assert GpuDetection(detect="always", image="probe:2").probe("", "k").image == "probe:2"
    assert GpuDetection(detect="always").probe("", "k").mode == "always"


def test_agents_lists_detected_and_configured_gpus_and_notes() -> None:
    usage = {"cpu": 8, "mem": 1 << 34, "gpu": 2}
    row = {
        "id": "gpu1",
        "resource_group": "default",
        "reachable": True,
        "message": "",
        "capacity": usage,
        "allocated": usage,
        "free": usage,
        "warning": "",
    }
    found = [GpuDevice("0", "GPU-a", "NVIDIA A100-SXM4-80GB", 80 * GIB).to_dict()]
    text = agents_table(
        [
            {**row, "gpu_ids": ["0"], "gpus": found, "gpu_note": ""},
            {**row, "id": "gpu2", "gpu_ids": ["4", "5"], "gpus": [], "gpu_note": ""},
            {**row, "id": "gpu3", "gpu_ids": [], "gpus": [], "gpu_note": "GPU detection failed"},
        ]
    )
    lines = text.splitlines()
    assert "gpu1: GPU 0 NVIDIA A100-SXM4-80GB 80g" in lines
    assert "gpu2: GPU 4, 5 (configured)" in lines
    assert "gpu3: GPU detection failed" in lines


async def test_a_launched_session_gets_distinct_gpus_its_count_and_slots(tmp_path: Path) -> None:
    agent = FakeAgent("local", gpus=("0", "1", "2", "3"), ready_on_start=True)
    parts = build(tmp_path, agent)
    spec = LaunchSpec.create(image=FAKE_IMAGE, size=2, gpu=2)
    session = await parts.launcher.launch(spec, owner="ada")
    specs = {b.spec.hostname: b.spec for b in agent.containers.values()}
    assert sorted(specs["main1"].gpu_ids + specs["sub1"].gpu_ids) == ["0", "1", "2", "3"]
    assert len(specs["main1"].gpu_ids) == len(specs["sub1"].gpu_ids) == 2
    for host, cspec_ in specs.items():
        assert (cspec_.env["GPU_COUNT"], cspec_.env["N_GPUS"]) == ("2", "2"), host
        box = agent.by_host(host)
        hostfile = box.files[naming.HOSTFILE_PATH].content.decode()
        assert hostfile == "main1 slots=2\nsub1 slots=2\n"
        # SSH sessions get them from the start-up script, which runs with this env
        assert box.files["/home/work/.ssh/environment"].link == naming.SSH_ENVIRONMENT
        body = container_config(cspec_, "127.0.0.1")
        assert body["HostConfig"]["DeviceRequests"][0]["DeviceIDs"] == list(cspec_.gpu_ids)
    assert [c.gpu_ids for c in session.containers] == [
        specs["main1"].gpu_ids,
        specs["sub1"].gpu_ids,
    ]
    parts.close()
