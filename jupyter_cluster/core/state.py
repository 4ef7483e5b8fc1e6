"""Session and container states, and which transitions between them are allowed.

Pure: used by the manager and the store to refuse impossible transitions, and by
every front end to know whether a session is still active.
"""

from __future__ import annotations

import time
from enum import Enum

from ..errors import Conflict
from .units import format_size


class SessionStatus(str, Enum):
    """Life cycle of a cluster session (Backend.AI's names)."""

    PENDING = "PENDING"
    PREPARING = "PREPARING"
    RUNNING = "RUNNING"
    RUNNING_DEGRADED = "RUNNING_DEGRADED"
    TERMINATING = "TERMINATING"
    TERMINATED = "TERMINATED"
    ERROR = "ERROR"
    CANCELLED = "CANCELLED"

    def __str__(self) -> str:
        return self.value


class ContainerStatus(str, Enum):
    """Life cycle of one container of a session."""

    PENDING = "PENDING"
    PULLING = "PULLING"  # its agent is pulling the session's image
    CREATING = "CREATING"
    STARTING = "STARTING"
    RUNNING = "RUNNING"
    EXITED = "EXITED"
    TERMINATED = "TERMINATED"
    ERROR = "ERROR"

    def __str__(self) -> str:
        return self.value


_S = SessionStatus

_SESSION_TRANSITIONS: dict[SessionStatus, frozenset[SessionStatus]] = {
    _S.PENDING: frozenset({_S.PREPARING, _S.CANCELLED, _S.ERROR}),
    _S.PREPARING: frozenset({_S.RUNNING, _S.ERROR, _S.TERMINATING, _S.CANCELLED}),
    _S.RUNNING: frozenset({_S.RUNNING_DEGRADED, _S.TERMINATING, _S.ERROR}),
    _S.RUNNING_DEGRADED: frozenset({_S.RUNNING, _S.TERMINATING, _S.ERROR}),
    _S.TERMINATING: frozenset({_S.TERMINATED, _S.ERROR}),
    _S.TERMINATED: frozenset(),
    _S.ERROR: frozenset({_S.TERMINATING, _S.TERMINATED}),
    _S.CANCELLED: frozenset(),
}

# The named sets of states, one name per rule; the JupyterLab extension's
# sessions.ts uses the same names for the same sets.

#: States that hold resources on agents (count against capacity).
ALLOCATING = frozenset({_S.PREPARING, _S.RUNNING, _S.RUNNING_DEGRADED, _S.TERMINATING})
#: States of a launch still settling: waiting for room, or being brought up (a
#: driver process is at work; watching a launch stops when it leaves them).
SETTLING = frozenset({_S.PENDING, _S.PREPARING})
#: States whose containers can be used: exec, terminals, kernels.
USABLE = frozenset({_S.RUNNING, _S.RUNNING_DEGRADED})
#: States of a session waiting for or holding resources (it counts against quotas,
#: and reconciliation keeps what Docker runs for it).
LIVE = ALLOCATING | {_S.PENDING}
#: States after which nothing more happens to a session.
FINAL = frozenset({_S.TERMINATED, _S.CANCELLED})
#: States that end a session: ``ended_at`` is set, its name is free again and its
#: containers are gone or going (ERROR may still need cleaning up).
ENDED = FINAL | {_S.ERROR}
#: States listed by ``ls`` without ``--all``.
ACTIVE = frozenset(SessionStatus) - FINAL
#: The states of each ``GET sessions?state=`` listing (ERROR is in both: ``ls`` shows
#: it until it is removed, and it has ended).
LISTINGS = {"active": ACTIVE, "ended": ENDED, "all": frozenset(SessionStatus)}


#: The reason of a session marked TERMINATING while its kernel exits, before its
#: removal: the process that marked it (its recorded driver) finishes it, and
#: reconciliation leaves it alone while that process lives (see
#: engine/reconcile.py); not kept as the reason it ended.
KERNEL_EXITING = "ending: its kernel is exiting"
#: The reason kept for a session whose launch stopped because the process driving it
#: was cancelled while it was being prepared (Ctrl-C on ``launch``, a kernel start
#: given up by Jupyter): what it had made is removed, its containers' logs kept.
LAUNCH_INTERRUPTED = "its launch was interrupted before it was running (e.g. Ctrl-C)"


def can_transition(old: SessionStatus, new: SessionStatus) -> bool:
    """Whether a session may go from ``old`` to ``new`` (same state is allowed)."""
    return old == new or new in _SESSION_TRANSITIONS[old]


def check_transition(old: SessionStatus, new: SessionStatus) -> None:
    """Raise :class:`Conflict` when a session may not go from ``old`` to ``new``."""
    if not can_transition(old, new):
        raise Conflict(f"a {old.value} session cannot become {new.value}")


def exit_reason(code: int | None, oom_killed: bool = False, finished_at: str = "") -> str:
    """Why a container is no longer running, as its status reason says it (the CLI's
    ``show``, REST, events, the sidebar): the exit code, the out-of-memory killer,
    and when."""
    when = f" at {finished_at}" if finished_at else ""
    if oom_killed:
        return (
            f"was killed by the out-of-memory killer (exit code {code}){when}: it needed "
            "more than its memory limit; launch with more --mem"
        )
    if code is not None and code > 128:
        return f"was killed by signal {code - 128} (exit code {code}){when}"
    return f"exited with code {code}{when}"


def oom_reason(count: int, at: float, mem_limit: int = 0) -> str:
    """Why a container that still runs has lost a process, as its status reason says
    it: the out-of-memory killer ended one of its processes (an MPI rank, the kernel)
    but not its init, so Docker does not see it exit. ``count`` kills so far, the last
    at ``at`` (seconds since the epoch), ``mem_limit`` the container's limit in bytes
    (0: unknown). Written by the server's OOM watch (engine/oom_watch.py)."""
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))
    so_far = f" ({count} so far)" if count > 1 else ""
    limit = f" ({format_size(mem_limit)})" if mem_limit > 0 else ""
    return (
        f"a process was killed by the out-of-memory killer at {when}{so_far}: it needed "
        f"more than the container's memory limit{limit}; launch with more --mem"
    )
