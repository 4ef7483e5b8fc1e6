"""Fixtures of every tier, and how the suite is shared between pytest-xdist workers.

``docker_engine`` is not autouse: ``tests/unit`` never needs Docker, and the Docker
tiers ask for it in their own conftest (or fixture).

``make test`` runs the suite on several workers (``--dist loadgroup``): most of a
Docker test's time is spent waiting on the engine, containers and kernels, not on
this machine's CPUs. :func:`pytest_collection_modifyitems` puts every test in a
group that one worker runs in order: its module (module-scoped fixtures stay shared,
and a module's tests never race each other), or a whole folder whose tests share
something of the machine (:data:`SHARED`).
"""

from __future__ import annotations

import fnmatch
from pathlib import Path

import pytest

from tests.support.docker import require_docker_engine

TESTS = Path(__file__).parent
#: Groups of tests that share one thing of the machine, so that they run on one worker.
SHARED = {
    # One JupyterHub per worker session, its Unix accounts, and the agent host's
    # egress chain (the team example restricts egress; test_egress removes the chain).
    "hub": ("hub", "integration/test_egress.py"),
    # Three Docker-in-Docker agents per worker session, in one Swarm.
    "multihost": ("multihost",),
    # The built extension in this checkout, its lint and unit tests, one browser.
    "browser": ("browser",),
    # The torch image, which the Horovod image is built on: built by one worker.
    "torch": ("integration/test_torch_distributed.py", "integration/test_horovod_job.py"),
    # Benchmarks that measure this machine's CPU and check that none of their labelled
    # containers is left: one at a time (one's leak check saw another's containers).
    "bench": ("integration/test_bench_*_smoke.py",),
}


def group_of(path: Path) -> str:
    """The xdist group of the tests in file ``path``: a :data:`SHARED` group (its
    folders, or files matching its patterns), else the file itself."""
    relative = path.relative_to(TESTS).as_posix()
    for group, prefixes in SHARED.items():
        if any(
            relative == p or relative.startswith(p + "/") or fnmatch.fnmatchcase(relative, p)
            for p in prefixes
        ):
            return group
    return relative


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which reads the marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test with its :func:`group_of` (pytest calls this after collecting;
    xdist's loadgroup reads the marks in its own hook, so this one runs first)."""
    for item in items:
        item.add_marker(pytest.mark.xdist_group(group_of(Path(item.path))))


@pytest.fixture(scope="session")
def docker_engine() -> None:
    """Docker must answer and the kernel image exist: fail (never skip) if not."""
    require_docker_engine()
