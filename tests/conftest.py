"""Fixtures of every tier. ``docker_engine`` is not autouse: ``tests/unit`` never needs
Docker, and the Docker tiers ask for it in their own conftest (or fixture)."""

from __future__ import annotations

import pytest

from tests.support.docker import require_docker_engine


@pytest.fixture(scope="session")
def docker_engine() -> None:
    """Docker must answer and the kernel image exist: fail (never skip) if not."""
    require_docker_engine()
