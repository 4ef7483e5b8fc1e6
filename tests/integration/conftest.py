"""Fixtures of the integration tests (helpers live in :mod:`.support`).

Each test gets a :class:`~.support.Workspace` of its own (``ws``), or shares one
with its module (``module_ws``) when it uses a session launched once per module.
Finishing a workspace removes every container and network labelled with its
manager id and fails the test if there was any. Docker must be reachable: these
tests fail, never skip, without it.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from .support import IMAGE, Workspace, run

# -- fixtures ---------------------------------------------------------------------


@pytest.fixture(scope="session", autouse=True)
def docker_engine() -> None:
    """Docker must be reachable and the kernel image built: fail (never skip) if not."""
    try:
        info = run(("docker", "info", "--format", "{{.ServerVersion}}"), timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.fail(f"the docker command failed: {exc}; these tests need a Docker engine")
    if info.returncode != 0:
        pytest.fail(f"the Docker engine is unreachable; start dockerd (make setup)\n{info}")
    image = run(("docker", "image", "inspect", IMAGE), timeout=60)
    if image.returncode != 0:
        pytest.fail(f"the image {IMAGE} is missing; build it with `jupyter cluster image build`")


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    """A fresh workspace for one test; leaks of Docker objects fail the test."""
    workspace = Workspace(tmp_path)
    for key, value in workspace.env.items():
        if key.startswith("JUPYTER"):
            monkeypatch.setenv(key, value)
    yield workspace
    workspace.finish()


@pytest.fixture(scope="module")
def module_ws(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    """A workspace shared by the tests of one module (for a shared session)."""
    workspace = Workspace(tmp_path_factory.mktemp("module"))
    yield workspace
    workspace.finish()
