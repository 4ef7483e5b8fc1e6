"""Session and container states, and which transitions between them are allowed.

Pure: used by the manager and the store to refuse impossible transitions, and by
every front end to know whether a session is still active.
"""

from __future__ import annotations

from enum import Enum

from ..errors import Conflict


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
    CREATING = "CREATING"
    STARTING = "STARTING"
    RUNNING = "RUNNING"
    EXITED = "EXITED"
    TERMINATED = "TERMINATED"
    ERROR = "ERROR"

    def __str__(self) -> str:
        return self.value


S = SessionStatus

_SESSION_TRANSITIONS: dict[SessionStatus, frozenset[SessionStatus]] = {
    S.PENDING: frozenset({S.PREPARING, S.CANCELLED, S.ERROR}),
    S.PREPARING: frozenset({S.RUNNING, S.ERROR, S.TERMINATING, S.CANCELLED}),
    S.RUNNING: frozenset({S.RUNNING_DEGRADED, S.TERMINATING, S.ERROR}),
    S.RUNNING_DEGRADED: frozenset({S.RUNNING, S.TERMINATING, S.ERROR}),
    S.TERMINATING: frozenset({S.TERMINATED, S.ERROR}),
    S.TERMINATED: frozenset(),
    S.ERROR: frozenset({S.TERMINATING, S.TERMINATED}),
    S.CANCELLED: frozenset(),
}

#: States that hold resources on agents (count against capacity).
ALLOCATING = frozenset({S.PREPARING, S.RUNNING, S.RUNNING_DEGRADED, S.TERMINATING})
#: States after which nothing more happens to a session.
FINAL = frozenset({S.TERMINATED, S.CANCELLED})
#: States listed by ``ls`` without ``--all``.
ACTIVE = frozenset(SessionStatus) - FINAL


def can_transition(old: SessionStatus, new: SessionStatus) -> bool:
    """Whether a session may go from ``old`` to ``new`` (same state is allowed)."""
    return old == new or new in _SESSION_TRANSITIONS[old]


def check_transition(old: SessionStatus, new: SessionStatus) -> None:
    """Raise :class:`Conflict` when a session may not go from ``old`` to ``new``."""
    if not can_transition(old, new):
        raise Conflict(f"a {old.value} session cannot become {new.value}")
