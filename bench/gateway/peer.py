"""gateway_provisioners' side of ``bench_gateway.py``, driven from the project's Python:
its environment, image, kernelspec and worker process.

gateway_provisioners is not a dependency of the project: it lives in an
environment of its own (``--gateway-python``). Its ``DockerProvisioner`` runs
kernels from an image that holds its kernel launcher (``bootstrap-kernel.sh`` and
``launch_ipykernel.py`` with ``server_listener.py``, which needs ``pycryptodomex``);
:func:`build_image` builds one from our default image, with no registry, copying
those files as its ``jupyter image-bootstrap install`` does; :func:`install_kernelspec`
makes its kernelspec run the launcher through ``launch.py``; :class:`GatewayWorker`
drives ``worker.py`` in that environment. Those two scripts (in this folder) run in
gateway_provisioners' Python and import nothing from ``bench/``. The floor of the
comparison is ours (:class:`common.floors.BareKernel`).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import string
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

#: This folder, which holds ``launch.py`` and ``worker.py``.
HERE = Path(__file__).resolve().parent
GATEWAY_IMAGE = "jupyter-cluster/gateway-kernel:bench"
KERNEL_NAME = "gp-bench"
#: What the image adds to ours: the launcher's Python dependency and ``python``
#: (bootstrap-kernel.sh calls it by that name), the launcher files, its CMD.
DOCKERFILE = """\
FROM {base}
USER root
RUN apt-get update \\
 && apt-get install -y --no-install-recommends python3-pycryptodome python-is-python3 \\
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
COPY kernel-launchers /usr/local/bin/kernel-launchers
COPY bootstrap-kernel.sh /usr/local/bin/bootstrap-kernel.sh
RUN chmod 0755 /usr/local/bin/bootstrap-kernel.sh
ENV KERNEL_LANGUAGE=python
CMD ["/usr/local/bin/bootstrap-kernel.sh"]
"""


def find_gateway(python: str) -> tuple[str | None, str]:
    """(the package folder, "") if ``python`` has ``gateway_provisioners[docker]``,
    else (None, why not)."""
    if not python:
        return None, (
            "gateway_provisioners is not installed here: install it in an environment of "
            "its own (python -m venv DIR && DIR/bin/pip install 'gateway_provisioners[docker]') "
            "and pass --gateway-python DIR/bin/python (or set JC_BENCH_GATEWAY_PYTHON)"
        )
    probe = "import os, docker, gateway_provisioners as g; print(os.path.dirname(g.__file__))"
    try:
        found = subprocess.run(
            [python, "-c", probe], capture_output=True, text=True, timeout=60, check=False
        )
    except OSError as exc:
        return None, f"cannot run {python}: {exc}"
    if found.returncode != 0:
        why = (found.stderr.strip().splitlines() or ["?"])[-1]
        return None, f"{python} has no gateway_provisioners[docker] ({why})"
    return found.stdout.strip(), ""


def default_gateway_python() -> str:
    """$JC_BENCH_GATEWAY_PYTHON, else this interpreter if it has gateway_provisioners."""
    import importlib.util

    if os.environ.get("JC_BENCH_GATEWAY_PYTHON"):
        return os.environ["JC_BENCH_GATEWAY_PYTHON"]
    return sys.executable if importlib.util.find_spec("gateway_provisioners") else ""


def build_image(package: str, base: str, tag: str = GATEWAY_IMAGE) -> None:
    """Build ``tag`` from ``base`` with gateway_provisioners' Python kernel launcher
    (the files its ``image-bootstrap install --languages Python`` puts in)."""
    launchers = Path(package) / "kernel-launchers"
    with tempfile.TemporaryDirectory(prefix="jc-bench-gp-") as context:
        target = Path(context) / "kernel-launchers" / "python"
        for part in ("python", "shared"):  # shared/ holds the real server_listener.py
            shutil.copytree(launchers / part, target, dirs_exist_ok=True)
        shutil.rmtree(target / "scripts" / "__pycache__", ignore_errors=True)
        bootstrap = (launchers / "bootstrap" / "bootstrap-kernel.sh").read_text()
        bootstrap = string.Template(bootstrap).safe_substitute(install_dir="/usr/local/bin")
        (Path(context) / "bootstrap-kernel.sh").write_text(bootstrap)
        (Path(context) / "Dockerfile").write_text(DOCKERFILE.format(base=base))
        built = subprocess.run(
            ["docker", "build", "-q", "-t", tag, context],
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
    if built.returncode != 0:
        raise RuntimeError(f"building {tag} failed:\n{built.stderr[-2000:]}")


def install_kernelspec(
    python: str, root: str, image: str, cpu: float, mem: int, label: str
) -> None:
    """The DockerProvisioner kernelspec ``gp-bench`` under the run's private prefix,
    made by gateway_provisioners' ``jupyter-docker-spec install``; its launcher is run
    by ``python`` through ``launch.py`` (the same limits as ours, a label)."""
    prefix = os.path.join(root, "prefix")
    installer = str(Path(python).parent / "jupyter-docker-spec")
    args = ["install", "--image-name", image, "--kernel-name", KERNEL_NAME, "--prefix", prefix]
    subprocess.run([installer, *args], capture_output=True, text=True, timeout=120, check=True)
    spec_file = Path(prefix, "share", "jupyter", "kernels", KERNEL_NAME, "kernel.json")
    spec = json.loads(spec_file.read_text())
    assert spec["argv"][0] == "python", spec["argv"]
    spec["argv"] = [python, str(HERE / "launch.py"), *spec["argv"][1:]]
    spec["env"] = {
        "JC_BENCH_CPU": str(cpu),
        "JC_BENCH_MEM": str(mem),
        "JC_BENCH_LABEL": label,
        # Its default refuses root (unauthorized_users); the kernel runs as uid 1000 anyway.
        "KERNEL_USERNAME": "jcbench",
    }
    spec_file.write_text(json.dumps(spec, indent=1))


class GatewayWorker:
    """``worker.py`` running in gateway_provisioners' Python; one command at a time."""

    def __init__(self, python: str) -> None:
        self.python = python
        self.process: asyncio.subprocess.Process | None = None

    async def open(self) -> None:
        """Start the worker (it inherits the run's private Jupyter dirs)."""
        env = {**os.environ, "GP_DOCKER_LOG_LEVEL": "WARNING"}
        self.process = await asyncio.create_subprocess_exec(
            self.python,
            str(HERE / "worker.py"),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=env,
        )

    async def call(self, **command: Any) -> dict[str, Any]:
        """Send one command; its answer (raises on an error answer)."""
        assert self.process and self.process.stdin and self.process.stdout
        self.process.stdin.write((json.dumps(command) + "\n").encode())
        await self.process.stdin.drain()
        line = await self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the gateway worker exited ({await self.process.wait()})")
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"gateway_provisioners: {answer['error']}")
        return answer

    async def close(self) -> None:
        """Ask the worker to quit (shutting down a kernel left running); kill it if it hangs."""
        if self.process is None or self.process.returncode is not None:
            return
        try:
            await asyncio.wait_for(self.call(cmd="quit"), 60)
            await asyncio.wait_for(self.process.wait(), 10)
        except (asyncio.TimeoutError, RuntimeError, BrokenPipeError, ConnectionResetError):
            self.process.kill()
            await self.process.wait()
