"""When an idle session is terminated: the rule behind ``ClusterApp.idle_timeout``.

A session whose kernel runs in a server is idle while its kernel is idle (not
busy, no message since ``last_activity``) and no terminal into its containers is
open. Once idle for ``timeout`` seconds, the server terminates it; until then the
session's model carries the deadline (``idle_deadline``) so the sidebar can show
the time left. Pure: the server's idle watcher (``server/idle.py``) feeds it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Activity:
    """What the server knows of a session's use right now."""

    last_activity: float  # epoch seconds of the kernel's last message (or the start)
    kernel_busy: bool = False
    open_terminals: int = 0


def idle_deadline(activity: Activity, timeout: float) -> float | None:
    """When the session will be terminated if nothing happens: None while it is in
    use (busy kernel, open terminal) or when there is no timeout."""
    if timeout <= 0 or activity.kernel_busy or activity.open_terminals:
        return None
    return activity.last_activity + timeout


def should_terminate(activity: Activity, timeout: float, now: float) -> bool:
    """Whether the session has been idle for ``timeout`` seconds at ``now``."""
    deadline = idle_deadline(activity, timeout)
    return deadline is not None and now >= deadline
