"""When a session that uses no CPU or GPU is warned, then terminated: the utilization rule.

Whatever started a session (the CLI, REST, a kernel, the notebook API), it is idle
while every container of it stays below a CPU threshold (percent of one CPU, as
``docker stats`` shows it) and every GPU it sees below a GPU threshold, no kernel
is busy, no terminal is open and no command runs in it (``exec``), and it is not a
batch session whose command still runs. Once idle for the timeout (the site's
``ClusterManager.utilization_idle_timeout`` or an owner's own, from a policy), its
status reason says so and when it will end (:func:`warning_reason`); if it stays
idle ``grace`` seconds more it is terminated with :func:`end_reason`. Used again
in between, the warning goes away and the idle time starts again.

Pure: the engine's sampler (:mod:`jupyter_cluster.engine.utilization_reading`) reads
the figures (:func:`cpu_between` turns two readings of a container's CPU counter
into its average use between them) and keeps a :class:`Watch` per session.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from enum import Enum

from .batch import FINISHED
from .models import Session
from .time_limits import format_duration

#: How the status reasons of this rule (its warning, its end) begin.
IDLE_PREFIX = "idle: "


@dataclass(frozen=True)
class IdleRule:
    """The rule for one session: ``timeout`` seconds below the thresholds before the
    warning (0: never), then ``grace`` seconds to the end."""

    timeout: float
    grace: float = 60.0
    cpu_threshold: float = 5.0  # percent of one CPU, per container
    gpu_threshold: float = 5.0  # percent, per GPU


@dataclass(frozen=True)
class Reading:
    """One sample of a session's containers: the busiest container's CPU % (of one
    CPU) and the busiest GPU's %, None when nothing could be read (no GPU: None)."""

    cpu_percent: float | None
    gpu_percent: float | None = None

    def below(self, rule: IdleRule) -> bool:
        """Whether the session used less than the thresholds (an unread CPU is not)."""
        if self.cpu_percent is None or self.cpu_percent >= rule.cpu_threshold:
            return False
        return self.gpu_percent is None or self.gpu_percent < rule.gpu_threshold


def cpu_between(
    before: tuple[float, float] | None, after: tuple[float, float], instant: float
) -> float:
    """A container's CPU % of one CPU since the last sample: ``before`` and ``after``
    are (CPU seconds used so far, epoch s) of two readings of its counter; ``instant``
    is Docker's own figure (its last second), which counts alone for a first reading
    or a counter that went back (a restart). The higher of the two, so that a burst
    between samples and a start just now both count."""
    if before is None or after[0] < before[0] or after[1] <= before[1]:
        return instant
    average = (after[0] - before[0]) / (after[1] - before[1]) * 100.0
    return max(average, instant)


@dataclass(frozen=True)
class Watch:
    """What the sampler remembers of a session between samples."""

    idle_since: float | None = None  # when it was last seen in use (None: in use now)
    warned_at: float | None = None  # when it was warned (None: not warned)


class Verdict(str, Enum):
    """What the sampler does after a sample."""

    KEEP = "keep"  # nothing to do
    WARN = "warn"  # set the warning (status reason)
    CLEAR = "clear"  # used again: take the warning away
    END = "end"  # terminate it with end_reason

    def __str__(self) -> str:
        return self.value


def judge(
    watch: Watch,
    reading: Reading,
    rule: IdleRule,
    now: float,
    *,
    in_use: bool = False,
    last_use: float | None = None,
    exempt: bool = False,
) -> tuple[Watch, Verdict]:
    """The session's next :class:`Watch` and what to do now. ``in_use``: a busy
    kernel, an open terminal or a running exec; ``last_use``: when a kernel or an
    exec was last active (epoch s); ``exempt``: a batch session whose command runs."""
    idle = rule.timeout > 0 and not exempt and not in_use and reading.below(rule)
    unwarn = Verdict.CLEAR if watch.warned_at is not None else Verdict.KEEP
    if not idle:
        return Watch(), unwarn
    since = watch.idle_since if watch.idle_since is not None else now
    if last_use is not None and last_use > since:  # used meanwhile: the idle time restarts
        return Watch(min(last_use, now)), unwarn
    if watch.warned_at is not None:
        done = now >= watch.warned_at + rule.grace
        return watch, Verdict.END if done else Verdict.KEEP
    if now - since >= rule.timeout:
        return Watch(since, now), Verdict.WARN
    return Watch(since), Verdict.KEEP


def _what(rule: IdleRule, gpus: bool) -> str:
    cpu = f"CPU below {rule.cpu_threshold:g}%"
    return f"{cpu} and GPU below {rule.gpu_threshold:g}%" if gpus else cpu


def warning_reason(rule: IdleRule, deadline: float, gpus: bool = False) -> str:
    """The status reason (and so the event) of a warned session; it names the moment
    (UTC), so it is the same text at every check."""
    at = time.strftime("%H:%M:%S UTC", time.gmtime(deadline))
    return (
        f"{IDLE_PREFIX}{_what(rule, gpus)} for {format_duration(rule.timeout)}; "
        f"terminates in {format_duration(rule.grace)} (at {at}) unless used"
    )


def end_reason(rule: IdleRule, idle_for: float, gpus: bool = False) -> str:
    """Why a session ended by this rule (kept in its history and the audit log)."""
    return f"{IDLE_PREFIX}{_what(rule, gpus)} for {format_duration(idle_for)}, terminated"


def batch_running(session: Session) -> bool:
    """Whether ``session`` is a batch session whose command has no result yet (such a
    session is exempt from this rule: it ends with its command)."""
    if not session.spec.command:
        return False
    return session.job is None or session.job.state not in FINISHED
