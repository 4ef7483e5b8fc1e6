"""Which process drives a launch, and whether it still runs.

A session being launched (PENDING or PREPARING) is driven by one process: the
Jupyter server, a foreground CLI, a detached driver or a kernel provisioner. The
store records it as a :class:`Driver` (pid, host name and the process's start
token), and reconciliation and the waiting queue ask :func:`driver_alive` before
failing or cancelling the session. A pid alone is not enough: after a crash the
same pid can come back as another process (PID 1 in a restarted container, pid
reuse), and after a reboot every pid is new. The start token (the boot id plus
the process's start time in clock ticks, from ``/proc``) tells them apart.
"""

from __future__ import annotations

import os
import socket
import time
from typing import NamedTuple

_BOOT_ID = "/proc/sys/kernel/random/boot_id"
#: Seconds a live process that marked a session TERMINATING (while its kernel exits,
#: or as it removes the containers) is left to finish it (the kernel's own exit is
#: bounded by jupyter_client's ``shutdown_wait_time``; a removal by the agents'
#: timeouts).
ENDING_GRACE = 120.0


class Driver(NamedTuple):
    """The process driving a session's launch, as recorded in the store."""

    pid: int
    host: str
    #: ``boot-id:start-ticks`` of the process, or "" where ``/proc`` cannot tell.
    started: str


def start_token(pid: int) -> str | None:
    """``boot-id:start-ticks`` of process ``pid``; None when it does not exist or has
    died (a zombie its parent has not reaped yet), "" when this system has no
    ``/proc`` to tell (then only existence is checked)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        with open(_BOOT_ID) as f:
            boot = f.read().strip()
    except FileNotFoundError:
        if not os.path.isdir("/proc/self"):
            return "" if _exists(pid) else None
        return None
    except OSError:
        return ""
    # The command name (field 2) may hold spaces and parentheses: split after its
    # last ")"; the state is field 3, the start time field 22, the 20th after it.
    fields = stat[stat.rindex(b")") + 2 :].split()
    if fields[0] in (b"Z", b"X"):  # dead, not yet reaped (an orphan waits for init)
        return None
    return f"{boot}:{int(fields[19])}"


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def this_process(pid: int | None = None) -> Driver:
    """The driver record of process ``pid`` (default: this one) on this host; the
    manager and the CLI call it when they take over a launch."""
    pid = os.getpid() if pid is None else pid
    return Driver(pid, socket.gethostname(), start_token(pid) or "")


def driver_alive(driver: Driver | None) -> bool:
    """Whether the recorded driver still runs: the same process (not merely the same
    pid) exists on this host. Drivers on another host count as alive, since this
    process cannot see them."""
    if driver is None:
        return False
    if driver.host != socket.gethostname():
        return True
    now = start_token(driver.pid)
    if now is None:
        return False
    return not (driver.started and now and now != driver.started)


def describe(driver: Driver | None) -> str:
    """``pid N`` for reasons that name a launch's process ("unrecorded" if none)."""
    return f"pid {driver.pid}" if driver else "unrecorded"


def still_ending(updated_at: float, driver: Driver | None) -> bool:
    """Whether ``driver``, recorded on a TERMINATING session last changed at
    ``updated_at``, is still taken to be ending it: that process runs, and the change
    is less than :data:`ENDING_GRACE` seconds old. A process that died, or took
    longer, is taken over. Asked by reconciliation (which then leaves the removal to
    it) and by a second removal (which waits for it, see ``engine.ending``)."""
    return time.time() - updated_at < ENDING_GRACE and driver_alive(driver)
