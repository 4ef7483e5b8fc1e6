"""Why a cluster kernel ended on its own: its last output, read from main1's log.

A local kernel that fails at start (an image without ipykernel, a broken package)
prints why on the terminal of whoever started it. A cluster kernel's output goes
to main1's log instead, so jupyter_client only says "Kernel died before replying
to kernel_info". :meth:`~.kernel_end.KernelEnding.poll` calls :func:`death_note`
the first time it finds the kernel ended without being asked to; the provisioner
logs the note (the server's log, or the terminal of ``jupyter execute``) and ends
the session with it as the reason.

The kernel's lines are those after the mark its start wrote into the log
(:func:`start_mark`), without sshd's (``sshd: …``) and jupyter-cluster's own.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..core.lines import printable
from ..engine.api import Engine

#: Lines of main1's log read back (its tail) to find the kernel's.
LOG_LINES = 400
#: The kernel's last lines given in the note.
SHOWN = 12
#: Seconds the kernel's last output may take to reach the log after it ended (it
#: goes through a FIFO and the start-up script), tried again until found.
SETTLE = (0.05, 0.1, 0.2, 0.4)
#: Prefixes of the log's lines that are not the kernel's.
NOT_THE_KERNELS = ("sshd: ", "jupyter-cluster: ")
#: What to do about the most common cause: an image without ipykernel.
NO_IPYKERNEL = "No module named ipykernel"
INSTALL_IPYKERNEL = (
    "the image needs ipykernel for its python3 (pip install ipykernel, or Debian's "
    "python3-ipykernel; see the README's 'Bring your own image')"
)


def start_mark(kernel_id: str) -> str:
    """The line a kernel's start writes into main1's log before the kernel runs."""
    return f"jupyter-cluster: kernel {kernel_id} starts"


def kernel_lines(log: list[str], kernel_id: str) -> list[str] | None:
    """The kernel's own lines in ``log`` (main1's), after its last start mark; None
    when the mark is not there (the log's tail no longer holds it)."""
    mark = start_mark(kernel_id)
    stripped = [line.rstrip("\r\n") for line in log]
    if mark not in stripped:
        return None
    after = stripped[len(stripped) - stripped[::-1].index(mark) :]
    return [line for line in after if line.strip() and not line.startswith(NOT_THE_KERNELS)]


def describe(code: int, lines: list[str] | None) -> str:
    """The note: the exit code and the kernel's last lines (or where to look)."""
    said = f"the kernel exited with code {code}"
    if code > 128:
        said = f"the kernel was ended by a signal (exit code {code})"
    elif code < 0:  # its exec's stream broke, or a re-attached kernel's pid is gone
        said = "the kernel ended (its exit code is not known)"
    if not lines:
        return f"{said}; see `jupyter cluster logs SESSION main1`"
    tail = [printable(line) for line in lines[-SHOWN:]]
    note = f"{said}; its last output in main1: " + " | ".join(tail)
    if any(NO_IPYKERNEL in line for line in lines):
        note += f"; {INSTALL_IPYKERNEL}"
    return note


async def _log(engine: Engine[Any], session_id: str) -> list[str]:
    return [line async for line in engine.logs(session_id, "main1", tail=LOG_LINES)]


async def death_note(engine: Engine[Any], session_id: str, kernel_id: str, code: int) -> str:
    """Why the kernel of ``session_id`` ended with ``code``, from main1's log; never
    raises (a log that cannot be read gives the code alone)."""
    lines: list[str] | None = None
    for pause in SETTLE:
        try:
            lines = kernel_lines(await _log(engine, session_id), kernel_id)
        except Exception:  # the session or its log may be gone already
            break
        if lines:
            break
        await asyncio.sleep(pause)
    return describe(code, lines)
