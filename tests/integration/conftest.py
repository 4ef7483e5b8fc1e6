"""Fixtures of the integration tests (helpers live in :mod:`.support`).

Each test gets a :class:`~.support.Workspace` of its own (``ws``), or shares one
with its module (``module_ws``) when it uses a session launched once per module.
Finishing a workspace removes every container and network labelled with its
manager id and fails the test if there was any. Docker must be reachable and the
kernel image built (the root conftest's ``docker_engine``): these tests fail, never
skip, without them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.images import HOROVOD, ensure_test_image

from .support import Workspace


@pytest.fixture(scope="session", autouse=True)
def needs_docker(docker_engine: None) -> None:
    """Every integration test needs the Docker engine and the kernel image."""


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


@pytest.fixture(scope="session")
def mpi_image(needs_docker: None) -> str:
    """The kernel image with Open MPI and mpi4py (``tests/images/mpi``), built once
    per run, and only when its Dockerfile or the kernel image changed."""
    return ensure_test_image("mpi", "jupyter-cluster/mpi-test:latest")


@pytest.fixture(scope="session")
def torch_image(needs_docker: None) -> str:
    """The kernel image with Debian's PyTorch (``tests/images/torch``), built once per
    run, and only when its Dockerfile or the kernel image changed."""
    return ensure_test_image("torch", "jupyter-cluster/torch-test:latest")


@pytest.fixture(scope="session")
def horovod_image(torch_image: str) -> str:
    """The torch image with Open MPI and Horovod built from its source release
    (``tests/images/horovod``), built once per run, and only when its Dockerfile,
    the torch image or the Horovod release changed."""
    return ensure_test_image("horovod", "jupyter-cluster/horovod-test:latest", (HOROVOD,))
