"""Fixtures of the server tests: pytest-jupyter's server with jupyter_cluster, real Docker.

``jp_server_config`` enables the extension with small defaults; a test module
changes the configuration by overriding the ``cluster_config`` fixture. The
``cluster`` fixture is the extension app; when the test ends it terminates what
is still active (as a user would) and then fails the test if any container or
network labelled with the test's manager id is left (removing it). These tests
need the Docker engine and the kernel image: they fail, never skip, without them
(the root conftest's ``docker_engine``).

The tests that run real ``jupyter server`` processes (:func:`.support.server`) use
the ``workspace`` fixture instead: this test's Jupyter dirs, with the
``jupyter_cluster_config.json`` of the ``workspace_config`` fixture (modules override
it), and the same check for leaks at the end.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pytest_jupyter.jupyter_server import *  # noqa: F403  (jp_fetch, jp_ws_fetch, …)
from traitlets.config import Config

from jupyter_cluster.engine.store.sessions import Store
from jupyter_cluster.server.app import ClusterApp
from tests.support.constants import SMALL_BODY
from tests.support.docker import assert_nothing_left, remove_leftovers


@pytest.fixture(scope="session", autouse=True)
def needs_docker(docker_engine: None) -> None:
    """Every server test needs the Docker engine and the kernel image."""


@pytest.fixture
def cluster_config() -> dict[str, Any]:
    """Extra configuration (``{"ClusterApp": {...}, ...}``); modules override it."""
    return {}


def base_config() -> dict[str, Any]:
    """The server's configuration in every test: the extensions, authentication required
    on every route (as the JupyterLab extension template sets it), small sessions."""
    return {
        "ServerApp": {
            "jpserver_extensions": {"jupyter_cluster": True, "jupyter_server_terminals": True},
            "allow_unauthenticated_access": False,
        },
        "ClusterApp": {"default_launch_options": dict(SMALL_BODY), "events_poll_interval": 0.2},
        "ClusterManager": {"pending_poll_interval": 0.2},
    }


@pytest.fixture
def jp_server_config(cluster_config: dict[str, Any]) -> Config:
    """pytest-jupyter's server configuration: :func:`base_config` and ``cluster_config``."""
    config = Config(base_config())
    config.merge(Config(cluster_config))
    return config


@pytest.fixture
def cluster(jp_serverapp: Any, jp_asyncio_loop: Any) -> Iterator[ClusterApp]:
    """The jupyter_cluster extension of the test server; checks for leaks at the end."""
    app: ClusterApp = jp_serverapp.web_app.settings["jupyter_cluster"]
    manager_id = app.engine.store.manager_id
    yield app

    async def finish() -> None:
        service = app.service
        await service.ensure_started()
        for session in app.engine.store.list():
            await service.terminate(session.id)

    problem = None
    try:
        jp_asyncio_loop.run_until_complete(finish())
    except Exception as exc:  # still look for leaks
        problem = exc
    assert_nothing_left(manager_id, *remove_leftovers(manager_id))
    if problem is not None:
        raise problem


@pytest.fixture
def workspace_config() -> dict[str, Any]:
    """The ``jupyter_cluster_config.json`` of the ``workspace`` fixture; modules override it."""
    return {"ClusterApp": {"default_launch_options": SMALL_BODY, "events_poll_interval": 0.2}}


@pytest.fixture
def workspace(
    tmp_path: Path,
    jp_environ: Any,
    jp_data_dir: Path,
    jp_config_dir: Path,
    workspace_config: dict[str, Any],
) -> Iterator[Path]:
    """This test's Jupyter dirs (set by pytest-jupyter) for servers of its own, configured
    with ``workspace_config``; whatever is left of its manager id is removed and fails
    the test."""
    (jp_config_dir / "jupyter_cluster_config.json").write_text(json.dumps(workspace_config))
    store = Store(jp_data_dir / "cluster" / "cluster.db")
    manager_id = store.manager_id
    store.close()
    yield tmp_path
    assert_nothing_left(manager_id, *remove_leftovers(manager_id))
