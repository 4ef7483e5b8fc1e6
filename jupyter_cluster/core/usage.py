"""Usage accounting: the CPU-, memory- and GPU-hours sessions were allocated.

As Slurm's ``sacct`` does, usage is allocation * time: a session of ``size``
containers each given ``cpu`` CPUs, ``mem`` bytes and ``gpu`` GPUs is charged
``size * cpu`` CPU-hours, ``size * mem / GiB`` GiB-hours and ``size * gpu``
GPU-hours for every hour it was running, whatever its processes used.

What counts, precisely: the time from when the session became RUNNING until it
ended (``ended_at``), or until now for a session that has not ended (RUNNING,
RUNNING_DEGRADED, TERMINATING: its containers still hold their allocation). The
moment it became RUNNING is ``created_at`` plus its launch phases up to
``bootstrap`` (:func:`.timings.elapsed_until_running`). Time PENDING (queued) or
PREPARING (pulling, creating, bootstrapping) is not charged, and a session that
never became RUNNING (its launch failed or it was cancelled: no ``bootstrap``
phase) is charged nothing. A query for a period ``[since, until)`` charges only
the part of each session's running time inside it.

Measured CPU time (``cpu_seconds_used``) is what the session's containers really
used: Docker's CPU counters, read while they run and just before they are removed
(:mod:`jupyter_cluster.engine.cpu_time`), summed over the containers (0 when never
read). It cannot be split by time: a session counts all of it in any period its
running time overlaps.

The server's ``GET cluster/api/usage`` and the CLI's ``jupyter cluster usage``
call :func:`session_usage` and :func:`per_user` on the sessions their engine lists
(ended ones included, as long as the history keeps them: ``history_max_age_days``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone

from ..errors import InvalidRequest
from .models import Session
from .timings import elapsed_until_running

GIB = 1024**3
HOUR = 3600.0


@dataclass(frozen=True)
class Usage:
    """Allocated resources * time (hours) of one session or a sum of them."""

    sessions: int = 0
    running_hours: float = 0.0
    cpu_hours: float = 0.0
    mem_gib_hours: float = 0.0
    gpu_hours: float = 0.0
    #: CPU seconds the containers measurably used (see the module docstring).
    cpu_seconds_used: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.sessions + other.sessions,
            self.running_hours + other.running_hours,
            self.cpu_hours + other.cpu_hours,
            self.mem_gib_hours + other.mem_gib_hours,
            self.gpu_hours + other.gpu_hours,
            self.cpu_seconds_used + other.cpu_seconds_used,
        )

    def to_dict(self) -> dict[str, float | int]:
        """The REST and ``--json`` shape (hours rounded to 1/10000, seconds to 1/1000)."""
        return {
            "sessions": self.sessions,
            "running_hours": round(self.running_hours, 4),
            "cpu_hours": round(self.cpu_hours, 4),
            "mem_gib_hours": round(self.mem_gib_hours, 4),
            "gpu_hours": round(self.gpu_hours, 4),
            "cpu_seconds_used": round(self.cpu_seconds_used, 3),
        }


def running_interval(session: Session, now: float) -> tuple[float, float] | None:
    """When the session was running (epoch seconds, start ≤ end), or None if it
    never became RUNNING."""
    if "bootstrap" not in session.timings:
        return None
    start = elapsed_until_running(session.created_at, session.timings)
    end = session.ended_at if session.ended_at is not None else now
    return start, max(start, end)


def session_usage(
    session: Session, now: float, since: float | None = None, until: float | None = None
) -> Usage:
    """The session's usage within ``[since, until)`` (either open), charged until
    ``now`` if it has not ended, with all its measured CPU time. ``sessions`` is 1
    when some running time falls in the period, else 0 (and so is everything else)."""
    interval = running_interval(session, now)
    if interval is None:
        return Usage()
    start, end = interval
    if since is not None:
        start = max(start, since)
    if until is not None:
        end = min(end, until)
    if end <= start:
        return Usage()
    hours = (end - start) / HOUR
    n, res = session.spec.size, session.spec.resources
    used = session.cpu_seconds_used or 0.0
    return Usage(
        1, hours, n * res.cpu * hours, n * res.mem / GIB * hours, n * res.gpu * hours, used
    )


def per_user(
    sessions: Iterable[Session], now: float, since: float | None = None, until: float | None = None
) -> dict[str, Usage]:
    """Each owner's total usage in the period (owners with none left out), by name."""
    totals: dict[str, Usage] = {}
    for session in sessions:
        used = session_usage(session, now, since, until)
        if used.sessions:
            totals[session.owner] = totals.get(session.owner, Usage()) + used
    return dict(sorted(totals.items()))


def report(
    sessions: Iterable[Session],
    now: float,
    since: float | None = None,
    until: float | None = None,
) -> dict[str, object]:
    """The reply of ``GET usage`` and ``jupyter cluster usage --json``: totals per
    user and per session (newest first) in the period."""
    rows = []
    kept = []
    for session in sessions:
        used = session_usage(session, now, since, until)
        if used.sessions:
            kept.append(session)
            rows.append(
                {
                    "id": session.id,
                    "name": session.name,
                    "owner": session.owner,
                    "status": session.status.value,
                    "size": session.spec.size,
                    "resources": session.spec.resources.to_dict(),
                    "created_at": session.created_at,
                    "ended_at": session.ended_at,
                    **used.to_dict(),
                }
            )
    rows.sort(key=lambda r: float(str(r["created_at"])), reverse=True)
    users = per_user(kept, now, since, until)
    return {
        "since": since,
        "until": until,
        "now": now,
        "users": [{"user": u, **t.to_dict()} for u, t in users.items()],
        "sessions": rows,
    }


def parse_time(value: str | None, field: str) -> float | None:
    """A period bound a person typed (``--since``, ``?since=``): an ISO date or
    date-time (UTC unless it names a zone), or epoch seconds; None when absent.
    InvalidRequest naming ``field`` otherwise."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        number = float(text)
    except ValueError:
        number = None
    try:
        if number is None:
            when = datetime.fromisoformat(text)
            if when.tzinfo is None:
                when = when.replace(tzinfo=timezone.utc)
            number = when.timestamp()
    except (ValueError, OverflowError):
        number = None
    if number is None or not math.isfinite(number):
        raise InvalidRequest(
            f"{field}: expected a date such as 2026-01-31, a date-time such as "
            f"2026-01-31T08:00 (UTC) or epoch seconds, got {value!r}",
            field,
        )
    return number


def parse_period(
    since: str | None, until: str | None, fields: tuple[str, str] = ("since", "until")
) -> tuple[float | None, float | None]:
    """The period ``since``/``until`` a person typed (see :func:`parse_time`; ``fields``
    names them as the caller takes them), refused when it ends before it starts: an
    empty period would only answer that nothing was used. Called by ``jupyter
    cluster usage`` and ``GET usage``."""
    start, end = parse_time(since, fields[0]), parse_time(until, fields[1])
    if start is not None and end is not None and end <= start:
        raise InvalidRequest(
            f"{fields[1]}: {until!r} is not after {fields[0]} {since!r}; "
            f"give an {fields[1]} later than the {fields[0]}",
            fields[1],
        )
    return start, end
