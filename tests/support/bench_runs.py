"""Running a diagnostic of ``bench/`` as a user would, and what its run left in Docker.

The diagnostics' smoke tests (``tests/integration/test_bench_*_smoke.py``) run a
script as a subprocess with a ``--run-id`` of their own, so that what they look for
afterwards is exactly what that run made, not another benchmark's.
"""

from __future__ import annotations

import sys
import uuid

from .constants import REPO
from .docker import docker
from .processes import Result, run

#: The label every Docker object a benchmark run makes carries (its run id).
RUN_LABEL = "label=jupyter-cluster-bench.run-id"


def run_diagnostic(name: str, *args: str, timeout: float = 180) -> tuple[Result, str]:
    """``bench/bench_<name>.py ARGS --run-id <fresh>`` run to its end, asserted to
    exit 0; its result and the run id."""
    run_id = uuid.uuid4().hex[:12]
    script = REPO / "bench" / f"bench_{name}.py"
    result = run((sys.executable, str(script), *args, "--run-id", run_id), timeout=timeout)
    assert result.returncode == 0, str(result)
    return result, run_id


def left_by(run_id: str) -> dict[str, list[str]]:
    """The containers, networks and volumes of run ``run_id`` still in Docker."""
    label = f"{RUN_LABEL}={run_id}"
    return {
        "containers": docker("ps", "-aq", "--filter", label).stdout.split(),
        "networks": docker("network", "ls", "-q", "--filter", label).stdout.split(),
        "volumes": docker("volume", "ls", "-q", "--filter", label).stdout.split(),
    }


#: What :func:`left_by` gives for a run that left nothing.
NOTHING = {"containers": [], "networks": [], "volumes": []}
