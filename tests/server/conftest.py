"""Fixtures of the server tests: pytest-jupyter's server with jupyter_cluster, real Docker.

``jp_server_config`` enables the extension with small defaults; a test module
changes the configuration by overriding the ``cluster_config`` fixture. The
``cluster`` fixture is the extension app; when the test ends it terminates what
is still active (as a user would) and then fails the test if any container or
network labelled with the test's manager id is left (removing it). These tests
need the Docker engine and the kernel image: they fail, never skip, without them.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
from pytest_jupyter.jupyter_server import *  # noqa: F403  (jp_fetch, jp_ws_fetch, …)
from traitlets.config import Config

from jupyter_cluster.server.app import ClusterApp

from .support import IMAGE, SMALL, remove_leftovers


@pytest.fixture(scope="session", autouse=True)
def docker_engine() -> None:
    """Docker must answer and the kernel image exist: fail (never skip) if not."""
    try:
        info = subprocess.run(("docker", "info"), capture_output=True, timeout=60)
        image = subprocess.run(("docker", "image", "inspect", IMAGE), capture_output=True)
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.fail(f"the docker command failed: {exc}; these tests need a Docker engine")
    if info.returncode != 0:
        pytest.fail("the Docker engine is unreachable; start dockerd (make setup)")
    if image.returncode != 0:
        pytest.fail(f"the image {IMAGE} is missing; build it with `jupyter cluster image build`")


@pytest.fixture
def cluster_config() -> dict[str, Any]:
    """Extra configuration (``{"ClusterApp": {...}, ...}``); modules override it."""
    return {}


def base_config() -> dict[str, Any]:
    return {
        "ServerApp": {
            "jpserver_extensions": {"jupyter_cluster": True, "jupyter_server_terminals": True}
        },
        "ClusterApp": {"default_launch_options": dict(SMALL), "events_poll_interval": 0.2},
        "ClusterManager": {"pending_poll_interval": 0.2},
    }


@pytest.fixture
def jp_server_config(cluster_config: dict[str, Any]) -> Config:
    config = Config(base_config())
    config.merge(Config(cluster_config))
    return config


@pytest.fixture
def cluster(jp_serverapp: Any, jp_asyncio_loop: Any) -> Iterator[ClusterApp]:
    """The jupyter_cluster extension of the test server; checks for leaks at the end."""
    app: ClusterApp = jp_serverapp.web_app.settings["jupyter_cluster"]
    manager_id = app.manager.store.manager_id
    yield app

    async def finish() -> None:
        service = app.service
        await service.ensure_started()
        for session in app.manager.store.list():
            await service.terminate(session.id)

    problem = None
    try:
        jp_asyncio_loop.run_until_complete(finish())
    except Exception as exc:  # still look for leaks
        problem = exc
    containers, networks = remove_leftovers(manager_id)
    assert not containers and not networks, (
        f"the test left {len(containers)} container(s) and {len(networks)} network(s) of "
        f"manager {manager_id} (removed now)"
    )
    if problem is not None:
        raise problem
