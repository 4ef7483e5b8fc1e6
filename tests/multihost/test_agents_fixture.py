"""Tests of the ``agents`` fixture itself: what the multi-host tests rely on.

Each agent answers over its URL (TLS for agent1, which refuses clients without a
certificate); the agents form one Swarm whose attachable overlay carries traffic and
DNS between containers on different agents; the data root is shared; ``pause()``
freezes an agent; inner containers accept the CPU and memory limits the engine sets.
Every test removes what it creates inside the agents.
"""

from __future__ import annotations

import secrets
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.constants import IMAGE

from .agents import AgentCluster, AgentHost
from .dockercli import docker

pytestmark = pytest.mark.docker


def docker_on(agent: AgentHost, *args: str, timeout: float = 120) -> str:
    """Run ``docker ARGS`` against ``agent``'s engine (over its URL), asserting that it
    succeeds; its stdout, stripped."""
    result = agent.docker(*args, timeout=timeout)
    assert result.returncode == 0, f"{agent.id}: docker {' '.join(args)}: {result.stderr}"
    return result.stdout.strip()


@pytest.fixture
def name() -> str:
    """A name unique to this test, for what it creates inside the agents."""
    return f"jc-t-{secrets.token_hex(3)}"


@pytest.fixture
def folder(agents: AgentCluster, name: str) -> Iterator[str]:
    """A folder name under the shared data root, removed after the test."""
    yield name
    shutil.rmtree(Path(agents.data_root or "") / name, ignore_errors=True)


def test_each_agent_answers_at_its_url(agents: AgentCluster) -> None:
    """Every engine answers over its URL; config() gives tls or insecure as fits."""
    assert [a.id for a in agents] == ["agent1", "agent2", "agent3"]
    for agent in agents:
        assert docker_on(agent, "version", "--format", "{{.Server.Version}}").startswith("20.10")
        config = agent.config()
        assert config["address"] == agent.ip and config["data_root"] == agents.data_root
        if agent.id == "agent1":
            assert agent.url == f"tcp://{agent.ip}:2376" and "insecure" not in config
            assert config["tls"] == agent.tls and set(config["tls"]) == {"ca", "cert", "key"}
        else:
            assert agent.url == f"tcp://{agent.ip}:2375" and config["insecure"] is True
            assert agent.tls is None and "tls" not in config
    assert agents["agent2"].config(resource_group="gpu")["resource_group"] == "gpu"


def test_tls_agent_refuses_clients_without_certificate(agents: AgentCluster) -> None:
    """agent1 turns away plain HTTP and TLS clients without a client certificate."""
    agent = agents["agent1"]
    assert agent.tls is not None
    without = [
        ["-H", agent.url],  # plain HTTP to the TLS port
        ["-H", agent.url, "--tlsverify", "--tlscacert", agent.tls["ca"]],  # no client cert
    ]
    for args in without:
        result = docker(
            *args, "version", "--format", "{{.Server.Version}}", timeout=30, check=False
        )
        assert result.returncode != 0 and not result.stdout.strip(), (args, result)


def test_swarm_has_all_agents_ready(agents: AgentCluster) -> None:
    """The three agents are Ready nodes of one Swarm."""
    out = docker_on(agents["agent1"], "node", "ls", "--format", "{{.Hostname}} {{.Status}}")
    assert sorted(out.splitlines()) == ["agent1 Ready", "agent2 Ready", "agent3 Ready"]


def test_overlay_network_spans_agents(agents: AgentCluster, name: str) -> None:
    """An attachable overlay made on agent1 carries DNS and HTTP from agent3 to agent2."""
    first, second, third = agents["agent1"], agents["agent2"], agents["agent3"]
    docker_on(first, "network", "create", "--driver", "overlay", "--attachable", name)
    client = (
        "import socket, time, urllib.request\n"
        "for _ in range(100):\n"
        "    try:\n"
        f"        print(socket.gethostbyname('{name}-srv'))\n"
        f"        print(urllib.request.urlopen('http://{name}-srv:8000/', timeout=5).status)\n"
        "        break\n"
        "    except OSError:\n"
        "        time.sleep(0.3)\n"
    )
    try:
        docker_on(
            second,
            "run",
            "-d",
            "--name",
            f"{name}-srv",
            "--network",
            name,
            "--network-alias",
            f"{name}-srv",
            "-w",
            "/tmp",
            IMAGE,
            "python3",
            "-m",
            "http.server",
            "8000",
        )
        out = docker_on(
            third,
            "run",
            "--rm",
            "--name",
            f"{name}-cli",
            "--network",
            name,
            IMAGE,
            "python3",
            "-c",
            client,
        )
        ip, status = out.splitlines()[-2:]
        assert ip.startswith("10.214.") and status == "200", out
    finally:
        second.docker("rm", "-f", f"{name}-srv")
        third.docker("rm", "-f", f"{name}-cli")
        for _ in range(30):  # the attachments go away asynchronously
            if first.docker("network", "rm", name).returncode == 0:
                break
            time.sleep(0.5)
    assert name not in docker_on(first, "network", "ls", "--format", "{{.Name}}").split()


def test_port_published_on_agent_address_is_reachable_here(agents: AgentCluster, name: str) -> None:
    """A port an inner container publishes on the agent's IP is reachable from here."""
    agent = agents["agent3"]
    docker_on(
        agent,
        "run",
        "-d",
        "--name",
        name,
        "-p",
        f"{agent.ip}::8000",
        "-w",
        "/tmp",
        IMAGE,
        "python3",
        "-m",
        "http.server",
        "8000",
    )
    try:
        host, _, port = docker_on(agent, "port", name, "8000/tcp").splitlines()[0].rpartition(":")
        assert host == agent.ip
        for _ in range(50):
            try:
                with urllib.request.urlopen(f"http://{agent.ip}:{port}/", timeout=5) as answer:
                    assert answer.status == 200
                    break
            except OSError:
                time.sleep(0.2)
        else:
            pytest.fail(f"nothing answered at {agent.ip}:{port}")
    finally:
        agent.docker("rm", "-f", name)


def test_data_root_is_shared(agents: AgentCluster, folder: str) -> None:
    """A file uid 1000 writes under data_root on agent1 is read on agent2."""
    root = agents.data_root
    docker_on(
        agents["agent1"],
        "run",
        "--rm",
        "--user",
        "1000:1000",
        "-v",
        f"{root}:/shared",
        IMAGE,
        "sh",
        "-c",
        f"mkdir /shared/{folder} && echo hello > /shared/{folder}/f",
    )
    out = docker_on(
        agents["agent2"],
        "run",
        "--rm",
        "--user",
        "1000:1000",
        "-v",
        f"{root}/{folder}:/data",
        IMAGE,
        "sh",
        "-c",
        "cat /data/f; id -u",
    )
    assert out.split() == ["hello", "1000"]
    assert (Path(root or "") / folder / "f").stat().st_uid == 1000


def test_pause_freezes_agent_and_its_containers(agents: AgentCluster, name: str) -> None:
    """pause() stops the API and the inner containers; unpause() brings both back."""
    agent, tick = agents["agent2"], Path(agents.data_root or "") / f"{name}.tick"
    docker_on(
        agent,
        "run",
        "-d",
        "--name",
        name,
        "-v",
        f"{agents.data_root}:/shared",
        IMAGE,
        "sh",
        "-c",
        f"while true; do date +%s%N > /shared/{name}.tick; sleep 0.1; done",
    )
    try:
        for _ in range(50):
            if tick.exists() and tick.read_text().strip():
                break
            time.sleep(0.1)
        agent.pause()
        try:
            with pytest.raises(subprocess.TimeoutExpired):
                agent.docker("version", timeout=3)
            frozen = tick.read_text()
            time.sleep(1)
            assert tick.read_text() == frozen, "the inner container ran on while paused"
        finally:
            agent.unpause()
        assert docker_on(agent, "version", "--format", "{{.Server.Version}}", timeout=20)
        time.sleep(0.5)
        assert tick.read_text() != frozen, "the inner container did not resume"
    finally:
        agent.docker("rm", "-f", name)
        tick.unlink(missing_ok=True)


def test_inner_containers_take_cpu_and_memory_limits(agents: AgentCluster) -> None:
    """Inner containers start with the CPU, memory, swap, shm limits and init the engine sets."""
    script = (
        "cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us /sys/fs/cgroup/memory/memory.limit_in_bytes"
        " 2>/dev/null || cat /sys/fs/cgroup/cpu.max /sys/fs/cgroup/memory.max"
    )
    for agent in agents:
        out = docker_on(
            agent,
            "run",
            "--rm",
            "--init",
            "--cpus",
            "0.5",
            "--memory",
            "256m",
            "--memory-swap",
            "256m",
            "--shm-size",
            "64m",
            IMAGE,
            "sh",
            "-c",
            script,
        )
        assert out.split() in (["50000", "268435456"], ["50000", "100000", "268435456"]), out
