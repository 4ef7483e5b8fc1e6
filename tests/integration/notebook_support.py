"""Helpers of the kernel and notebook tests (``test_notebook.py``, ``test_provisioner.py``):
real kernels driven through jupyter_client, notebooks run with ``jupyter execute``.

A local kernel (``python3``) runs as a subprocess with the workspace's environment,
so the engine it uses (:mod:`jupyter_cluster.session`, a singleton per process) is its
own, on the workspace's store. A cluster kernel is started by the provisioner in
the test process, which reads the workspace's ``JUPYTER_*`` variables from
``os.environ`` (the ``ws`` fixture sets them). Cells run with
:mod:`tests.support.kernels`.
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import nbformat
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager

from tests.support.constants import EXAMPLES, JUPYTER, READY
from tests.support.kernels import Cell, run_cell, start_client
from tests.support.processes import run

from .support import Workspace


@asynccontextmanager
async def kernel(
    name: str, env: dict[str, str] | None = None
) -> AsyncIterator[tuple[AsyncKernelManager, AsyncKernelClient]]:
    """A started kernel of kernelspec ``name`` and a ready client; shut down after."""
    km = AsyncKernelManager(kernel_name=name)
    try:
        kc = await start_client(km, **({"env": env} if env is not None else {}))
        try:
            yield km, kc
        finally:
            kc.stop_channels()
    finally:
        if km.has_kernel:
            await km.shutdown_kernel(now=True)


def local_kernel(ws: Workspace) -> Any:
    """A plain ``python3`` kernel (this virtualenv's ipykernel) in the workspace."""
    return kernel("python3", env=ws.env)


async def refused_line(kc: AsyncKernelClient, line: str, first: str) -> Cell:
    """Run a wrong ``%cluster`` line: it must print one error (starting with ``first``)
    on stderr, nothing on stdout, no traceback, and the cell still succeeds."""
    cell = await run_cell(kc, line)
    assert cell.status == "ok" and not cell.errors and not cell.stdout, str(cell)
    assert cell.stderr.startswith(first), str(cell)
    assert "Traceback" not in cell.stderr, str(cell)
    return cell


def kernel_name_of(notebook: str) -> str:
    """The kernelspec named in an example notebook's metadata."""
    return str(nbformat.read(EXAMPLES / notebook, as_version=4).metadata["kernelspec"]["name"])


@dataclass
class Executed:
    """A notebook run by ``jupyter execute``: its cells' outputs."""

    notebook: nbformat.NotebookNode

    @property
    def outputs(self) -> list[dict[str, Any]]:
        """Every output of every code cell, in order."""
        return [o for c in self.notebook.cells if c.cell_type == "code" for o in c.outputs]

    @property
    def errors(self) -> list[dict[str, Any]]:
        """The error outputs."""
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


def stable_prefix(log: str, last: str = READY) -> list[str]:
    """The lines of a container log up to and including ``last`` (the start-up part,
    which SSH connections made later do not change), without trailing whitespace."""
    lines = [line.rstrip() for line in log.splitlines()]
    assert last in lines, f"{last!r} is not in the log:\n{log}"
    return lines[: lines.index(last) + 1]
