"""Fixtures of the hub tests: a real JupyterHub running ``examples/team/jupyterhub_config.py``.

The ``hub`` fixture (one per test session) starts the installed JupyterHub as root,
with configurable-http-proxy from npm, PAM log-in, users ``alice``, ``bob`` and
``clusteradmin`` whose servers run as the Unix users of those names (passwords from
:mod:`.accounts`), and the ``cluster`` service (``jupyter-cluster serve``) on its Unix
socket; see :mod:`.launch` for what the tests change in the example and
:class:`.support.Hub` for the helpers. These tests
need root, the proxy (``make setup``) and the Docker engine (the service owns it):
they fail, never skip, without them.

At the end every server, the Hub, the service and the proxy are stopped, and the
test session fails if a process of the Hub or a Docker object of its service's
manager id was left (both removed). Users' servers run from this checkout's
``.venv``: :class:`.access.TraversalGrant` makes the directories in the way
traversable meanwhile (on this project's machines ``/root``, above the Python
the venv was made from).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.docker import remove_egress_chain

from . import launch
from .access import TraversalGrant
from .support import ADMIN, Hub

#: Runs after every other hub test: it leaves alice a history (a terminated and a
#: cancelled session), and tests that list her sessions with ``?all=1`` expect none.
LAST = "test_lab_as_hub_user.py"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Move the tests of :data:`LAST` behind the last other hub test."""
    last = [item for item in items if item.path.name == LAST]
    if not last:
        return
    rest = [item for item in items if item.path.name != LAST]
    here = Path(__file__).parent
    hub_items = [i for i, item in enumerate(rest) if item.path.parent == here]
    at = hub_items[-1] + 1 if hub_items else len(rest)
    items[:] = [*rest[:at], *last, *rest[at:]]


@pytest.fixture(scope="session")
def hub(docker_engine: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    """A running JupyterHub of the team example, driven as ``test-admin`` (see above)."""
    if os.geteuid() != 0:
        pytest.fail("the hub tests need root (the Hub spawns servers as alice and bob)")
    if not shutil.which("configurable-http-proxy"):
        pytest.fail("configurable-http-proxy is missing; install it with `make setup`")
    grant = TraversalGrant()
    # Not under pytest's own tmp (root's only, 0700): the session's directory is
    # traversable (0711) so that tests may hand users files in it; what is secret
    # (state/: the Hub's database and cookie secret, the service's store) is root's only.
    root = Path(tempfile.mkdtemp(prefix="jupyter-cluster-hub-"))
    root.chmod(0o711)
    # The service's socket: in a directory that is root's and writable by root only
    # (not under /tmp, which everyone may write), as users' servers demand.
    run = Path(tempfile.mkdtemp(prefix="jupyter-cluster-hub-", dir="/run"))
    run.chmod(0o755)
    log = tmp_path_factory.mktemp("hub") / "jupyterhub.log"
    try:
        changed = grant.acquire()
        if changed:
            print(f"hub fixture: o+x on {changed} until the hub tests end")
        running, proc = launch.start(root, run, log)
        try:
            yield running
        finally:
            launch.stop(running, proc)
            remove_egress_chain()  # the example restricts egress
    finally:
        grant.release()
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(run, ignore_errors=True)


@pytest.fixture(scope="session")
def team(hub: Hub) -> dict[str, str]:
    """alice's, bob's and admin's servers running; an API token of each (all of the
    user's permissions, as a token made on the Hub's token page has)."""
    tokens = {}
    for user in ("alice", "bob", ADMIN):
        hub.start_server(user)
        tokens[user] = hub.token(user)
    return tokens
