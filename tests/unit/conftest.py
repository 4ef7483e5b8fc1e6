"""Fixtures shared by the unit tests of more than one module."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest


@pytest.fixture
def other_process() -> Iterator[int]:
    """The pid of another process that runs for the test's length: a second engine
    process (``rm`` in another terminal) recorded as a session's driver."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield proc.pid
    proc.kill()
    proc.wait()
