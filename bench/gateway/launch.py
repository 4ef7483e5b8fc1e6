"""gateway_provisioners' ``launch_docker.py``, given the benchmark's limits and label.

The ``gateway_provisioners`` kernelspec ``bench_gateway.py`` installs
(:func:`gateway.peer.install_kernelspec`) runs this script (with gateway_provisioners'
own Python, so it imports nothing from ``bench/``) in place of ``launch_docker.py``:
``launch.py LAUNCH_DOCKER_PY ARGS...``. It runs that launcher unchanged
(``runpy``, as ``__main__``), except that docker-py's ``containers.run`` also gets

- the same CPU and memory limits as our containers (``JC_BENCH_CPU`` CPUs as
  ``nano_cpus``, ``JC_BENCH_MEM`` bytes as ``mem_limit`` and ``memswap_limit``),
  which the launcher has no option for, so both sides are measured under the same
  limits;
- the label ``JC_BENCH_LABEL`` (``key=value``), so the benchmark can find and remove
  whatever a failed run leaves behind.

The variables come from the kernelspec's ``env``.
"""

from __future__ import annotations

import os
import runpy
import sys
from typing import Any

from docker.models.containers import ContainerCollection

_run = ContainerCollection.run


def run_with_limits(self: Any, image: Any, command: Any = None, **kwargs: Any) -> Any:
    """``ContainerCollection.run`` with the benchmark's limits and label added."""
    mem = int(os.environ["JC_BENCH_MEM"])
    kwargs.setdefault("nano_cpus", round(float(os.environ["JC_BENCH_CPU"]) * 1e9))
    kwargs.setdefault("mem_limit", mem)
    kwargs.setdefault("memswap_limit", mem)
    key, _, value = os.environ["JC_BENCH_LABEL"].partition("=")
    kwargs["labels"] = {**(kwargs.get("labels") or {}), key: value}
    return _run(self, image, command, **kwargs)


def main() -> None:
    """Run the launcher given as the first argument with the patched ``run``."""
    ContainerCollection.run = run_with_limits  # type: ignore[method-assign]
    launcher = sys.argv[1]
    sys.argv = sys.argv[1:]
    runpy.run_path(launcher, run_name="__main__")


if __name__ == "__main__":
    main()
