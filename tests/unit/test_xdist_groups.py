"""The suite's groups reach pytest-xdist: one worker runs all of a group's tests.

``make test`` relies on it (tests/conftest.py): a module's tests share module
fixtures and never race each other, and the folders of :data:`tests.conftest.SHARED`
share one JupyterHub, one Swarm of test agents, one browser. pytest 9.2 with
pytest-xdist 3.8 spread every group over the workers without a word.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: A module of pure tests, more of them than workers.
MODULE = "tests/unit/test_host_guard.py"


def test_one_worker_runs_every_test_of_a_module() -> None:
    argv = [sys.executable, "-m", "pytest", "-n", "3", "--dist", "loadgroup", "-v"]
    argv += ["-p", "no:cacheprovider", MODULE]
    run = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-2000:]
    workers: dict[str, set[str]] = defaultdict(set)
    for worker, test in re.findall(r"^\[(gw\d+)\] .*?PASSED (\S+)", run.stdout, re.M):
        workers[test.split("::")[0]].add(worker)
    assert workers[MODULE], run.stdout[-2000:]
    assert len(workers[MODULE]) == 1, dict(workers)
