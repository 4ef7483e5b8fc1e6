"""Fixtures of the multi-host tests: ``agents``, three Docker-in-Docker agents.

pytest loads this for every test under ``tests/multihost``. The ``agents`` fixture
starts one :class:`~tests.multihost.agents.AgentCluster` per test session and
removes it at the end; without a Docker engine or the images it fails, never skips.
Every test here is marked ``docker``.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.constants import IMAGE

from .agents import AgentCluster
from .dockercli import BASE_IMAGE, DockerError, engine_problem, missing_images, remove_stale

HERE = Path(__file__).parent
#: Timings of this session's cluster, shown in the terminal summary.
_TIMINGS: dict[str, float] = {}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests of this folder ``docker`` (pytest calls this after collecting)."""
    for item in items:
        if HERE in Path(item.path).parents:
            item.add_marker(pytest.mark.docker)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print how long the agents took to build, start and stop (pytest calls this)."""
    if _TIMINGS:
        shown = ", ".join(f"{k} {v:.1f} s" for k, v in _TIMINGS.items())
        terminalreporter.write_line(f"multihost agents: {shown}")


@pytest.fixture(scope="session", autouse=True)
def multihost_docker(request: pytest.FixtureRequest) -> None:
    """Docker must answer here: use the root ``docker_engine`` fixture if there is one,
    and check ``docker info`` ourselves in any case. Fails (never skips)."""
    try:
        request.getfixturevalue("docker_engine")
    except pytest.FixtureLookupError as exc:
        if exc.argname != "docker_engine":
            raise
    problem = engine_problem()
    if problem:
        pytest.fail(f"the multi-host tests need a Docker engine on this machine: {problem}")


@pytest.fixture(scope="session")
def agents(multihost_docker: None) -> Iterator[AgentCluster]:
    """Three started agents (agent1 with TLS) in one Swarm, removed after the session."""
    missing = missing_images([IMAGE, BASE_IMAGE])
    if missing:
        pytest.fail(
            f"the multi-host tests need the images {', '.join(missing)}: build them first "
            "(the kernel image with `jupyter cluster image build`)"
        )
    remove_stale()
    cluster = AgentCluster(3, images=[IMAGE])
    try:
        cluster.start()
    except (DockerError, RuntimeError, OSError, subprocess.SubprocessError) as exc:
        pytest.fail(f"the multi-host agents did not start: {exc}")
    _TIMINGS.update(cluster.timings)
    try:
        yield cluster
    finally:
        cluster.stop()
        _TIMINGS.update(cluster.timings)
