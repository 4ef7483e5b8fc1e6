"""When an idle session is terminated: the rule behind ``ClusterApp.idle_timeout``.

A session whose kernel runs in a server is idle while its kernel is idle (not
busy, no message since its last activity), no terminal into its containers is
open and no command runs in them (``exec`` from any process: the CLI, REST,
``%cluster exec``, ``--all`` included). Once idle for ``timeout`` seconds, counted
from the last of the kernel's activity and the last exec's start or end, the
server terminates it; until then the session's model carries the deadline
(``idle_deadline``) so the sidebar can show the time left. Pure: the server's idle
watcher (``server/idle.py``) feeds it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Activity:
    """What the server knows of a session's use right now."""

    last_activity: float  # epoch seconds of the kernel's last message (or the start)
    kernel_busy: bool = False
    open_terminals: int = 0
    #: Commands running in its containers (exec) whose process is alive.
    running_execs: int = 0
    #: Epoch seconds when an exec last began or ended (None: never).
    last_exec: float | None = None

    @property
    def in_use(self) -> bool:
        """Whether something uses the session now (busy kernel, terminal, exec)."""
        return self.kernel_busy or self.open_terminals > 0 or self.running_execs > 0

    @property
    def last_use(self) -> float:
        """When the session was last used: the later of the kernel and the execs."""
        return max(self.last_activity, self.last_exec or 0.0)


def idle_deadline(activity: Activity, timeout: float) -> float | None:
    """When the session will be terminated if nothing happens: None while it is in
    use (busy kernel, open terminal, running exec) or when there is no timeout."""
    if timeout <= 0 or activity.in_use:
        return None
    return activity.last_use + timeout


def should_terminate(activity: Activity, timeout: float, now: float) -> bool:
    """Whether the session has been idle for ``timeout`` seconds at ``now``."""
    deadline = idle_deadline(activity, timeout)
    return deadline is not None and now >= deadline
