"""Agent configuration and the Docker connection's safety rules, without a Docker engine.

- ``tcp://`` agents need TLS client certificates, or an explicit ``insecure: True``
  (then the manager warns at every start); the messages say what to do.
- The kernel transport defaults to SSH for agents that publish on a network
  address, loopback included (a published port is open to every local user).
- A Docker engine that accepts connections but never answers makes calls fail
  within the configured timeout with an error naming the agent, and marks the
  agent unavailable; ``info`` reports it unreachable instead of hanging.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_cluster.engine.agents.docker.agent import DockerAgent
from jupyter_cluster.engine.agents.registry import agent_configs
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.errors import AgentError, InvalidRequest


def tls_files(tmp_path: Path) -> dict[str, str]:
    files = {}
    for name in ("ca", "cert", "key"):
        path = tmp_path / f"{name}.pem"
        path.write_text("not checked here\n")
        files[name] = str(path)
    return files


def test_a_plain_tcp_agent_is_refused_with_how_to_set_up_tls() -> None:
    with pytest.raises(InvalidRequest) as caught:
        agent_configs([{"id": "gpu1", "url": "tcp://10.0.0.5:2375"}], "/data")
    message = str(caught.value)
    assert "gpu1" in message and "root on that host" in message
    assert "--tlsverify" in message and "insecure: True" in message


def test_tls_files_must_exist_and_be_complete(tmp_path: Path) -> None:
    with pytest.raises(InvalidRequest, match="ca, cert and key"):
        agent_configs([{"url": "tcp://h:2376", "tls": {"ca": "x"}}], "/data")
    files = tls_files(tmp_path)
    with pytest.raises(InvalidRequest, match="no such file"):
        agent_configs([{"url": "tcp://h:2376", "tls": {**files, "key": "/nope.pem"}}], "/data")
    (config,) = agent_configs([{"url": "tcp://h:2376", "tls": files}], "/data")
    assert config.tls is not None and config.tls.cert == files["cert"]
    assert config.docker_cli_flags()[:3] == ["-H", "tcp://h:2376", "--tlsverify"]


def test_insecure_tcp_is_accepted_with_a_warning_at_every_start(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    agents = [{"id": "lab", "url": "tcp://127.0.0.1:2375", "insecure": True}]
    for _ in range(2):
        with caplog.at_level(logging.WARNING):
            ClusterManager(
                db_path=str(tmp_path / "c.db"), data_root=str(tmp_path / "f"), agents=agents
            )
    warnings = [r for r in caplog.records if "plain TCP Docker API" in r.getMessage()]
    assert len(warnings) == 2


def test_unix_sockets_and_the_local_engine_need_no_tls() -> None:
    configs = agent_configs([{"id": "a"}, {"id": "b", "url": "unix:///run/docker.sock"}], "/d")
    assert [c.tls for c in configs] == [None, None]
    with pytest.raises(InvalidRequest, match="not a Docker URL"):
        agent_configs([{"url": "http://h:2375"}], "/d")


@pytest.mark.parametrize("url", ["tcp://h:99999", "tcp://h:0", "tcp://h:x", "ssh://u@h:70000"])
def test_a_url_without_a_valid_port_is_refused_with_the_configuration(url: str) -> None:
    """It was taken, and the agent then unavailable: "Port out of range 0-65535"."""
    with pytest.raises(InvalidRequest) as caught:
        agent_configs([{"id": "x", "url": url, "insecure": True}], "/d")
    assert caught.value.message == (
        f"ClusterManager.agents[0] (x).url: {url!r} has no valid port; give one from 1 to "
        "65535, e.g. tcp://HOST:2376"
    )
    assert agent_configs([{"url": "ssh://u@h"}], "/d")[0].url == "ssh://u@h"  # ssh's own


def test_the_kernel_transport_defaults_to_ssh_even_on_loopback() -> None:
    configs = agent_configs(
        [
            {"id": "here", "address": "127.0.0.1"},
            {"id": "there", "address": "192.0.2.10"},
            {"id": "forced", "address": "192.0.2.11", "kernel_transport": "direct"},
        ],
        "/d",
    )
    assert [c.kernel_transport for c in configs] == ["ssh", "ssh", "direct"]
    assert agent_configs([], "/d")[0].kernel_transport == "ssh"  # the local engine too
    with pytest.raises(InvalidRequest, match="kernel_transport"):
        agent_configs([{"kernel_transport": "telnet"}], "/d")


def test_timeouts_come_from_the_manager_or_the_agent() -> None:
    defaults = {"timeout": 7.0, "connect_timeout": 2.0}
    a, b = agent_configs([{"id": "a"}, {"id": "b", "timeout": 1.5}], "/d", defaults)
    assert (a.timeout, a.connect_timeout, b.timeout) == (7.0, 2.0, 1.5)
    with pytest.raises(InvalidRequest, match="seconds"):
        agent_configs([{"timeout": -1}], "/d")


@pytest.fixture
def silent_engine() -> Iterator[int]:
    """A TCP port on loopback that takes connections (the kernel's backlog accepts
    them) and never answers, like a frozen Docker engine."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    yield int(server.getsockname()[1])
    server.close()


async def test_a_silent_engine_fails_calls_within_the_timeout(silent_engine: int) -> None:
    (config,) = agent_configs(
        [
            {
                "id": "frozen",
                "url": f"tcp://127.0.0.1:{silent_engine}",
                "insecure": True,
                "timeout": 0.5,
                "connect_timeout": 0.5,
            }
        ],
        "/d",
    )
    agent = DockerAgent(config)
    try:
        started = time.monotonic()
        info = await agent.info()
        assert not info.reachable and "frozen" in info.message
        assert "did not answer within 0.5 s" in info.message
        with pytest.raises(AgentError) as caught:
            await agent.list_containers({"x": "y"})
        assert caught.value.agent == "frozen" and "unavailable" in str(caught.value)
        assert time.monotonic() - started < 5
        assert agent.connection.unavailable is not None
    finally:
        await agent.close()


async def test_an_engine_that_is_not_there_is_unavailable_with_why() -> None:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nothing listens there now
    (config,) = agent_configs(
        [{"id": "gone", "url": f"tcp://127.0.0.1:{port}", "insecure": True}], "/d"
    )
    agent = DockerAgent(config)
    try:
        info = await agent.info()
        assert not info.reachable and "cannot reach the Docker engine" in info.message
    finally:
        await agent.close()


def test_the_cli_answers_while_an_agent_is_frozen(silent_engine: int, tmp_path: Path) -> None:
    """Regression: with a frozen engine, `agents`, `ls` and `launch --no-wait` hung."""
    config = tmp_path / "config"
    config.mkdir()
    (config / "jupyter_cluster_config.py").write_text(
        "c.ClusterManager.agents = [{'id': 'frozen', 'url': "
        f"'tcp://127.0.0.1:{silent_engine}', 'insecure': True, 'cpu': 2, 'mem': '4g'}}]\n"
        "c.ClusterManager.docker_timeout = 1.0\n"
        "c.ClusterManager.docker_connect_timeout = 1.0\n"
    )
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(config),
        "JUPYTER_DATA_DIR": str(tmp_path / "data"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
    }

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "jupyter_cluster.cli", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )

    began = time.monotonic()
    agents = cli("agents", "--json")
    assert agents.returncode == 0, agents.stderr
    (row,) = json.loads(agents.stdout)
    assert row["reachable"] is False and "did not answer within 1 s" in row["message"]
    listed = cli("ls", "--json")
    assert listed.returncode == 0 and json.loads(listed.stdout) == []
    launched = cli("launch", "--image", "img", "--no-wait", "--json")
    assert launched.returncode == 0, launched.stderr
    session = json.loads(launched.stdout)
    assert session["status"] == "PENDING" and "frozen" in session["status_reason"]
    assert cli("rm", session["id"]).returncode == 0
    assert time.monotonic() - began < 45
