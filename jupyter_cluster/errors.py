"""Exceptions of jupyter-cluster.

Every error a front end can show derives from :class:`ClusterError`; its message
says what was wrong and what to do. Front ends map the subclasses to their own
conventions: the CLI exits with code 2 for :class:`InvalidRequest` and
:class:`NotFound`, the REST handlers answer 400 and 404 (and 403 for
:class:`Forbidden`).
"""

from __future__ import annotations


class ClusterError(Exception):
    """Root of every error jupyter-cluster raises on purpose."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class InvalidRequest(ClusterError):
    """The user's input is wrong (bad size, unknown mode, bad folder name…).

    ``field`` names the offending input, so a form or REST client can point at it.
    Raised before anything is created.
    """

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class NotFound(ClusterError):
    """An unknown session, host, folder or agent was named."""


class Conflict(ClusterError):
    """The request clashes with the current state (e.g. a name already in use)."""


class Forbidden(ClusterError):
    """The caller is known but may not do this (e.g. read another user's limits without
    being an admin): HTTP 403, as the shared service answered it."""


class TooMany(ClusterError):
    """A user holds as many of something (e.g. live streams) as one may: HTTP 429."""


class AgentError(ClusterError):
    """A Docker agent failed or could not be reached; raised at the agent edge."""

    def __init__(self, message: str, agent: str | None = None) -> None:
        super().__init__(message)
        self.agent = agent


class LaunchFailed(ClusterError):
    """Creating or starting the containers of a session failed.

    By the time it is raised, everything the launch made has been removed and the
    session is in ERROR with the same message as its reason.
    """


class UnsafeSetting(ClusterError):
    """A setting that would let host users reach each other's sessions: the engine
    refuses to run with it (e.g. a ``work_uid`` that a host account holds)."""
