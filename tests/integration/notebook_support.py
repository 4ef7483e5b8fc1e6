"""Helpers of ``test_notebook.py``: real kernels, cells run through jupyter_client,
notebooks run with ``jupyter execute``.

A local kernel (``python3``) runs as a subprocess with the workspace's environment,
so the engine it uses (:mod:`jupyter_cluster.session`, a singleton per process) is its
own, on the workspace's store. A cluster kernel is started by the provisioner in
the test process, which reads the workspace's ``JUPYTER_*`` variables from
``os.environ`` (the ``ws`` fixture sets them).
"""

from __future__ import annotations

import asyncio
import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
import pytest
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager

from .support import Workspace, run

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
JUPYTER = str(Path(sys.executable).with_name("jupyter"))
#: What a kernel start may take on a busy 2-core machine (a cluster launch is ~3 s).
START_TIMEOUT = 120


@dataclass
class Cell:
    """What one executed cell produced, as seen on iopub and the shell channel."""

    status: str
    stdout: str = ""
    stderr: str = ""
    errors: list[dict[str, Any]] = field(default_factory=list)
    data: list[dict[str, Any]] = field(default_factory=list)

    def __str__(self) -> str:
        tracebacks = "\n".join("\n".join(e.get("traceback", [])) for e in self.errors)
        return (
            f"status {self.status}\n--- stdout\n{self.stdout}--- stderr\n{self.stderr}"
            f"--- errors\n{tracebacks}"
        )


async def run_cell(kc: AsyncKernelClient, code: str, timeout: float = 120) -> Cell:
    """Run ``code`` in the kernel; collect its streams, errors and display data."""
    cell = Cell(status="")

    def hook(msg: dict[str, Any]) -> None:
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            name = content["name"]
            setattr(cell, name, getattr(cell, name) + content["text"])
        elif kind == "error":
            cell.errors.append(content)
        elif kind in ("display_data", "execute_result"):
            cell.data.append(content["data"])

    reply = await kc.execute_interactive(code, timeout=timeout, output_hook=hook)
    cell.status = reply["content"]["status"]
    return cell


async def ok(kc: AsyncKernelClient, code: str, timeout: float = 120) -> Cell:
    """Like :func:`run_cell`, asserting that the cell succeeded without an error."""
    cell = await run_cell(kc, code, timeout)
    assert cell.status == "ok" and not cell.errors, str(cell)
    return cell


@asynccontextmanager
async def kernel(
    name: str, env: dict[str, str] | None = None
) -> AsyncIterator[tuple[AsyncKernelManager, AsyncKernelClient]]:
    """A started kernel of kernelspec ``name`` and a ready client; shut down after."""
    km = AsyncKernelManager(kernel_name=name)
    try:
        kwargs = {"env": env} if env is not None else {}
        await asyncio.wait_for(km.start_kernel(**kwargs), START_TIMEOUT)
        kc = km.client()
        kc.start_channels()
        try:
            await kc.wait_for_ready(timeout=60)
            yield km, kc
        finally:
            kc.stop_channels()
    finally:
        if km.has_kernel:
            await km.shutdown_kernel(now=True)


def local_kernel(ws: Workspace) -> Any:
    """A plain ``python3`` kernel (this virtualenv's ipykernel) in the workspace."""
    return kernel("python3", env=ws.env)


def install_kernelspec(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch, name: str, *args: str
) -> str:
    """``jupyter cluster kernelspec install NAME ARGS --prefix`` under the workspace,
    found through ``JUPYTER_PATH`` (in this process and the workspace's commands)."""
    prefix = ws.root / "prefix"
    ws.env["JUPYTER_PATH"] = str(prefix / "share" / "jupyter")
    monkeypatch.setenv("JUPYTER_PATH", ws.env["JUPYTER_PATH"])
    result = ws.ok("kernelspec", "install", name, *args, "--prefix", str(prefix))
    assert f"installed kernelspec {name}" in result.stdout, str(result)
    return name


def kernel_name_of(notebook: str) -> str:
    """The kernelspec named in an example notebook's metadata."""
    return str(nbformat.read(EXAMPLES / notebook, as_version=4).metadata["kernelspec"]["name"])


@dataclass
class Executed:
    """A notebook run by ``jupyter execute``: its cells' outputs."""

    notebook: nbformat.NotebookNode

    @property
    def outputs(self) -> list[dict[str, Any]]:
        return [o for c in self.notebook.cells if c.cell_type == "code" for o in c.outputs]

    @property
    def errors(self) -> list[dict[str, Any]]:
        return [o for o in self.outputs if o.get("output_type") == "error"]

    @property
    def text(self) -> str:
        """Every stream output and text/plain result, in order."""
        parts = []
        for output in self.outputs:
            if output.get("output_type") == "stream":
                parts.append(output["text"])
            elif "data" in output:
                parts.append(output["data"].get("text/plain", "") + "\n")
        return "".join(parts)


def execute_notebook(
    ws: Workspace, notebook: str, kernel_name: str | None = None, timeout: float = 300
) -> Executed:
    """Copy ``examples/NOTEBOOK`` into the workspace and run it with ``jupyter execute``
    (with the workspace's environment); assert that it succeeded."""
    work = ws.root / "notebooks"
    work.mkdir(exist_ok=True)
    target = work / notebook
    shutil.copy(EXAMPLES / notebook, target)
    output = target.stem + "-executed"
    args = [JUPYTER, "execute", f"--output={output}", str(target)]
    if kernel_name:
        args.insert(2, f"--kernel_name={kernel_name}")
    result = run(args, env=ws.env, cwd=work, timeout=timeout)
    assert result.returncode == 0, str(result)
    executed = Executed(nbformat.read(work / f"{output}.ipynb", as_version=4))
    assert not executed.errors, executed.errors
    return executed


def stable_prefix(log: str, last: str = "jupyter-cluster: ready") -> list[str]:
    """The lines of a container log up to and including ``last`` (the start-up part,
    which SSH connections made later do not change), without trailing whitespace."""
    lines = [line.rstrip() for line in log.splitlines()]
    assert last in lines, f"{last!r} is not in the log:\n{log}"
    return lines[: lines.index(last) + 1]
