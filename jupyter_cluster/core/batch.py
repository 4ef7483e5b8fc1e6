"""Batch jobs: the input checks and the pure state logic.

A batch session is launched with a ``command``: once it runs, the command runs in
main1 as ``work`` and, when it exits, the session ends by itself with a result.
:meth:`~.models.LaunchSpec.create` checks the fields with :func:`parse_command` and
:func:`parse_retries`; the engine's job runner (:mod:`jupyter_cluster.engine.batch`)
keeps a :class:`Job` in the session's record and decides with
:meth:`Job.after_exit` and :func:`wait_code`; ``ls``/``show`` print
:func:`job_summary`. Time limits are :mod:`.time_limits`'.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from ..errors import InvalidRequest
from .time_limits import LIFETIME_EXIT, LIFETIME_PREFIX, format_duration
from .units import whole_number

#: At most this many extra tries of a failing job (``retries``).
MAX_RETRIES = 10
#: A command longer than this is refused (it travels in the environment of an exec).
MAX_COMMAND = 64 * 1024


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


def parse_retries(value: object) -> int:
    """How many times a failing batch job is tried again: 0 to :data:`MAX_RETRIES`."""
    try:
        n = whole_number(value)
    except ValueError:
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
    #: Why it is STOPPED, FAILED without an exit code, or FAILED before its retries
    #: ran out ("" otherwise).
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

    def given_up(self, reason: str) -> Job:
        """The job FAILED with its last try's exit code although retries were left,
        since ``reason`` (e.g. a container of its session is gone) means another try
        would fail for that alone; only from WAITING after a failed try."""
        last = self.current
        if self.state is not JobState.WAITING or last is None or last.exit_code is None:
            raise ValueError(f"a {self.state} job has no failed try to give up after")
        return replace(self, state=JobState.FAILED, exit_code=last.exit_code, reason=reason)

    def end_reason(self) -> str:
        """The session's status reason when the job ended it."""
        tries = f" after {len(self.tries)} tries" if len(self.tries) > 1 else ""
        if self.state is JobState.SUCCEEDED:
            return f"batch job succeeded{tries}"
        if self.exit_code is not None:
            why = f"; not tried again: {self.reason}" if self.reason else ""
            return f"batch job failed with exit code {self.exit_code}{tries}{why}"
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
