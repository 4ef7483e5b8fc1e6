"""Batch jobs and time limits: the input checks and the pure state logic.

A batch session is launched with a ``command``: once it runs, the command runs in
main1 as ``work`` and, when it exits, the session ends by itself with a result. A
session may also have a maximum lifetime (``max_lifetime``, under the site's
``ClusterManager.max_session_lifetime``). :meth:`~.models.LaunchSpec.create` checks
the fields with :func:`parse_command`, :func:`parse_lifetime` and
:func:`parse_retries`; the engine's job runner (:mod:`jupyter_cluster.engine.batch`)
and lifetime watch (:mod:`jupyter_cluster.engine.lifetime`) keep a :class:`Job` in
the session's record and decide with :meth:`Job.after_exit`, :func:`lifetime_due`
and :func:`wait_code`; ``ls``/``show`` print :func:`job_summary`.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from ..errors import InvalidRequest

#: At most this many extra tries of a failing job (``retries``).
MAX_RETRIES = 10
#: A command longer than this is refused (it travels in the environment of an exec).
MAX_COMMAND = 64 * 1024
#: ``wait``'s exit code for a session ended by its lifetime (as timeout(1) says).
LIFETIME_EXIT = 124
#: The warning comes this long before the limit, or at 90 % of it if that is later.
WARN_BEFORE = 60.0
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$", re.IGNORECASE)


def parse_command(value: object) -> str | None:
    """A batch command as given (None or "" for none); InvalidRequest (``command``)
    for anything but text, blank text, a NUL or more than 64 KiB."""
    if value is None or value == "":
        return None
    if not isinstance(value, str) or not value.strip():
        raise InvalidRequest(
            "command: give a shell command as text, e.g. 'python train.py'", "command"
        )
    if "\0" in value or len(value) > MAX_COMMAND:
        raise InvalidRequest(
            f"command: at most {MAX_COMMAND} characters, without NUL characters", "command"
        )
    return value


def parse_lifetime(value: object, field: str = "max_lifetime") -> float | None:
    """Seconds from ``90``, ``"90s"``, ``"30m"``, ``"2h"`` or ``"1d"``; None for no limit
    (None, "", 0). InvalidRequest naming ``field`` otherwise."""
    if value is None or value == "" or value == 0:
        return None
    seconds: float
    if isinstance(value, bool):
        seconds = math.nan
    elif isinstance(value, (int, float)):
        seconds = float(value)
    elif isinstance(value, str) and (m := _DURATION.match(value)):
        seconds = float(m.group(1)) * _UNITS[(m.group(2) or "s").lower()]
    else:
        seconds = math.nan
    if not 0 < seconds < math.inf:
        raise InvalidRequest(
            f"{field}: {value!r} is not a duration; give seconds or e.g. 90s, 30m, 2h, 1d",
            field,
        )
    return seconds


def parse_retries(value: object) -> int:
    """How many times a failing batch job is tried again: 0 to :data:`MAX_RETRIES`."""
    try:
        n = int(value)  # type: ignore[call-overload]
        if isinstance(value, bool) or (isinstance(value, float) and value != n):
            raise ValueError
    except (TypeError, ValueError):
        raise InvalidRequest(f"retries: {value!r} is not a whole number", "retries") from None
    if not 0 <= n <= MAX_RETRIES:
        raise InvalidRequest(f"retries: give 0 to {MAX_RETRIES}, got {n}", "retries")
    return n


def check_retries(command: str | None, retries: int) -> None:
    """InvalidRequest when retries are asked for without a command to retry."""
    if retries and not command:
        raise InvalidRequest(
            "retries: only a batch job is tried again; give its command too (--command)",
            "retries",
        )


def check_site_limit(lifetime: float | None, site: float) -> None:
    """InvalidRequest when a session's ``lifetime`` exceeds the site's limit (``site``
    seconds, 0: none); the engine's ``make_spec`` calls it."""
    if site and lifetime is not None and lifetime > site:
        raise InvalidRequest(
            f"max_lifetime: {format_duration(lifetime)} is more than this site allows "
            f"({format_duration(site)}); ask for at most that",
            "max_lifetime",
        )


def effective_lifetime(lifetime: float | None, site: float) -> float | None:
    """The limit that applies: the session's own, else the site's (0: none)."""
    return lifetime if lifetime is not None else (site or None)


def format_duration(seconds: float) -> str:
    """``90s``, ``30m``, ``2h``, ``1h30m``: the shortest exact form (whole seconds)."""
    total = round(seconds)
    if total < 60:
        return f"{total}s"
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if total >= size:
            parts.append(f"{total // size}{unit}")
            total %= size
    return "".join(parts)


#: How the reason of a session ended at its limit begins.
LIFETIME_PREFIX = "reached its maximum lifetime"


def lifetime_reason(limit: float) -> str:
    """Why a session ended at its limit (kept in its history)."""
    return f"{LIFETIME_PREFIX} of {format_duration(limit)}"


#: How the lifetime warning (a status reason, so an event) begins.
WARNING_PREFIX = "will reach its maximum lifetime"


def warning_reason(limit: float, deadline: float) -> str:
    """The status reason (and so the event) a session gets before its limit; it names
    the moment (UTC), so it is the same text at every check."""
    at = time.strftime("%H:%M:%S UTC", time.gmtime(deadline))
    return f"{WARNING_PREFIX} of {format_duration(limit)} at {at}"


def lifetime_due(started: float, limit: float | None, now: float) -> str:
    """``"end"`` at or past the limit, ``"warn"`` within the warning's reach (the last
    60 s, or the last 10 % of a short limit), else ``""``."""
    if limit is None:
        return ""
    age = now - started
    if age >= limit:
        return "end"
    return "warn" if age >= limit - min(WARN_BEFORE, limit * 0.1) else ""


class JobState(str, Enum):
    """Where a batch job is: WAITING for its (next) try, RUNNING one, or its result."""

    WAITING = "waiting"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    #: The session ended before the command did (removed, lifetime, an error).
    STOPPED = "stopped"

    def __str__(self) -> str:
        return self.value


FINISHED = frozenset({JobState.SUCCEEDED, JobState.FAILED, JobState.STOPPED})


@dataclass(frozen=True)
class JobTry:
    """One run of the command: when it started and ended, and its exit code."""

    number: int
    started_at: float
    ended_at: float | None = None
    exit_code: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "exit_code": self.exit_code,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JobTry:
        code = data.get("exit_code")
        return cls(
            number=int(data["number"]),
            started_at=float(data["started_at"]),
            ended_at=data.get("ended_at"),
            exit_code=None if code is None else int(code),
        )


@dataclass(frozen=True)
class Job:
    """A batch job's state as the store keeps it (in the session's record)."""

    state: JobState = JobState.WAITING
    tries: tuple[JobTry, ...] = ()
    exit_code: int | None = None
    #: Why it is STOPPED or FAILED without an exit code ("" otherwise).
    reason: str = ""

    @property
    def current(self) -> JobTry | None:
        """The latest try, if any."""
        return self.tries[-1] if self.tries else None

    @property
    def duration(self) -> float | None:
        """Seconds from the first try's start to the last one's end (None if none ended)."""
        if not self.tries or self.tries[-1].ended_at is None:
            return None
        return self.tries[-1].ended_at - self.tries[0].started_at

    def start_try(self, now: float) -> Job:
        """The job with try number len(tries)+1 RUNNING (only from WAITING)."""
        if self.state is not JobState.WAITING:
            raise ValueError(f"a {self.state} job cannot start a try")
        number = len(self.tries) + 1
        return replace(self, state=JobState.RUNNING, tries=(*self.tries, JobTry(number, now)))

    def after_exit(self, code: int, retries: int, now: float) -> Job:
        """The job once its current try exited with ``code``: SUCCEEDED on 0; on
        failure WAITING for another try while fewer than ``retries`` extra tries ran,
        else FAILED."""
        current = self.current
        if self.state is not JobState.RUNNING or current is None:
            raise ValueError(f"a {self.state} job has no running try")
        ended = replace(current, ended_at=now, exit_code=code)
        tries = (*self.tries[:-1], ended)
        if code == 0:
            return replace(self, state=JobState.SUCCEEDED, tries=tries, exit_code=0)
        if len(tries) <= retries:
            return replace(self, state=JobState.WAITING, tries=tries)
        return replace(self, state=JobState.FAILED, tries=tries, exit_code=code)

    def stopped(self, reason: str, now: float) -> Job:
        """The job ended without a result (its session ended first); a finished job
        stays as it is."""
        if self.state in FINISHED:
            return self
        tries = self.tries
        if self.state is JobState.RUNNING and tries:
            tries = (*tries[:-1], replace(tries[-1], ended_at=now))
        return replace(self, state=JobState.STOPPED, tries=tries, reason=reason)

    def end_reason(self) -> str:
        """The session's status reason when the job ended it."""
        tries = f" after {len(self.tries)} tries" if len(self.tries) > 1 else ""
        if self.state is JobState.SUCCEEDED:
            return f"batch job succeeded{tries}"
        if self.exit_code is not None:
            return f"batch job failed with exit code {self.exit_code}{tries}"
        return f"batch job failed: {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "state": self.state.value,
            "exit_code": self.exit_code,
            "tries": [t.to_dict() for t in self.tries],
            "duration": self.duration,
            "reason": self.reason,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Job:
        code = data.get("exit_code")
        return cls(
            state=JobState(data.get("state", "waiting")),
            tries=tuple(JobTry.from_dict(t) for t in data.get("tries") or ()),
            exit_code=None if code is None else int(code),
            reason=str(data.get("reason") or ""),
        )


def wait_code(status: str, status_reason: str, job: Job | None) -> int:
    """``jupyter cluster wait``'s exit code for an ended session: the job's exit code;
    124 when its lifetime ended it; 0 for any other session removed normally
    (TERMINATED), 1 when it ended otherwise (ERROR, CANCELLED, a job stopped)."""
    if job is not None and job.exit_code is not None:
        return job.exit_code
    reasons = (status_reason, job.reason if job is not None else "")
    if any(r.startswith(LIFETIME_PREFIX) for r in reasons):
        return LIFETIME_EXIT
    if job is not None:
        return 1
    return 0 if status == "TERMINATED" else 1


def job_summary(job: Job | None, now: float) -> str:
    """One line for ``ls``/``show``: ``running (try 2)``, ``succeeded 0 in 12s``,
    ``failed 3 in 4s``, ``stopped``; "" for an interactive session."""
    if job is None:
        return ""
    current = job.current
    if job.state is JobState.RUNNING and current is not None:
        extra = f", try {current.number}" if current.number > 1 else ""
        return f"running {format_duration(now - current.started_at)}{extra}"
    if job.state is JobState.WAITING:
        return f"waiting (try {len(job.tries) + 1})" if job.tries else "waiting"
    took = f" in {format_duration(job.duration)}" if job.duration is not None else ""
    code = f" {job.exit_code}" if job.exit_code is not None else ""
    tries = f" ({len(job.tries)} tries)" if len(job.tries) > 1 else ""
    return f"{job.state.value}{code}{took}{tries}"
