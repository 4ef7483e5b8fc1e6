"""The utilization idle rule (#26 item 4), pure: a session below the CPU and GPU
thresholds for the timeout is warned, then ended after the grace time; any use
(CPU, GPU, a busy kernel, a terminal, an exec) restarts the idle time and takes the
warning away; batch sessions whose command runs, and timeouts of 0, never end."""

from __future__ import annotations

from jupyter_cluster.core.batch import Job, JobState
from jupyter_cluster.core.models import LaunchSpec, Session
from jupyter_cluster.core.utilization_idle import (
    IdleRule,
    Reading,
    Verdict,
    Watch,
    batch_running,
    cpu_between,
    end_reason,
    judge,
    warning_reason,
)

RULE = IdleRule(timeout=600, grace=60, cpu_threshold=5, gpu_threshold=10)
QUIET = Reading(cpu_percent=1.0)
BUSY = Reading(cpu_percent=25.0)


def run(samples: list[tuple[float, Reading]], rule: IdleRule = RULE, **kw: object) -> list[str]:
    """The verdicts of a series of (time, reading) samples from a fresh watch."""
    watch, verdicts = Watch(), []
    for now, reading in samples:
        watch, verdict = judge(watch, reading, rule, now, **kw)  # type: ignore[arg-type]
        verdicts.append(verdict.value)
    return verdicts


def test_a_quiet_session_is_warned_at_the_timeout_and_ended_after_the_grace() -> None:
    watch, verdict = judge(Watch(), QUIET, RULE, 1000.0)
    assert (watch, verdict) == (Watch(1000.0), Verdict.KEEP)  # idle from the first sample
    watch, verdict = judge(watch, QUIET, RULE, 1599.0)
    assert verdict is Verdict.KEEP
    watch, verdict = judge(watch, QUIET, RULE, 1600.0)
    assert (watch, verdict) == (Watch(1000.0, 1600.0), Verdict.WARN)
    watch, verdict = judge(watch, QUIET, RULE, 1659.0)
    assert (watch, verdict) == (Watch(1000.0, 1600.0), Verdict.KEEP)  # warned once only
    watch, verdict = judge(watch, QUIET, RULE, 1660.0)
    assert verdict is Verdict.END


def test_a_warning_always_comes_first_even_when_samples_are_far_apart() -> None:
    assert run([(0.0, QUIET), (5000.0, QUIET), (5030.0, QUIET), (5060.0, QUIET)]) == [
        "keep",
        "warn",
        "keep",
        "end",
    ]


def test_cpu_use_restarts_the_idle_time_and_takes_the_warning_away() -> None:
    samples = [(0.0, QUIET), (600.0, QUIET), (630.0, BUSY), (660.0, QUIET), (1259.0, QUIET)]
    assert run(samples) == ["keep", "warn", "clear", "keep", "keep"]
    # busy before any warning: nothing to take away
    assert run([(0.0, QUIET), (300.0, BUSY), (600.0, QUIET), (1199.0, QUIET)]) == ["keep"] * 4


def test_the_threshold_is_strict_and_an_unread_cpu_is_not_idle() -> None:
    assert not Reading(5.0).below(RULE) and Reading(4.99).below(RULE)
    assert not Reading(None).below(RULE)  # no figure (agent down): never idle
    assert run([(0.0, Reading(None)), (10_000.0, Reading(None))]) == ["keep", "keep"]


def test_a_busy_gpu_keeps_a_session_and_a_gpu_without_figures_does_not() -> None:
    assert not Reading(1.0, gpu_percent=10.0).below(RULE)
    assert Reading(1.0, gpu_percent=9.0).below(RULE)
    assert Reading(1.0, gpu_percent=None).below(RULE)
    assert run([(0.0, Reading(1.0, 50.0)), (10_000.0, Reading(1.0, 50.0))]) == ["keep"] * 2


def test_a_busy_kernel_a_terminal_or_an_exec_keeps_a_session() -> None:
    samples = [(0.0, QUIET), (10_000.0, QUIET), (20_000.0, QUIET)]
    assert run(samples, in_use=True) == ["keep"] * 3
    watch, _ = judge(Watch(), QUIET, RULE, 0.0)
    watch, verdict = judge(watch, QUIET, RULE, 600.0)
    assert verdict is Verdict.WARN
    watch, verdict = judge(watch, QUIET, RULE, 620.0, in_use=True)
    assert (watch, verdict) == (Watch(), Verdict.CLEAR)


def test_a_later_use_restarts_the_idle_time() -> None:
    watch, _ = judge(Watch(), QUIET, RULE, 0.0, last_use=-50.0)  # used before: no matter
    assert watch == Watch(0.0)
    watch, verdict = judge(watch, QUIET, RULE, 500.0, last_use=400.0)  # a kernel message
    assert (watch, verdict) == (Watch(400.0), Verdict.KEEP)
    watch, verdict = judge(watch, QUIET, RULE, 999.0, last_use=400.0)
    assert verdict is Verdict.KEEP
    watch, verdict = judge(watch, QUIET, RULE, 1000.0, last_use=400.0)
    assert verdict is Verdict.WARN
    watch, verdict = judge(watch, QUIET, RULE, 1030.0, last_use=1020.0)  # an exec ended
    assert (watch, verdict) == (Watch(1020.0), Verdict.CLEAR)


def test_no_timeout_and_exempt_sessions_never_end() -> None:
    samples = [(0.0, QUIET), (10_000.0, QUIET), (20_000.0, QUIET)]
    assert run(samples, rule=IdleRule(timeout=0)) == ["keep"] * 3
    assert run(samples, exempt=True) == ["keep"] * 3


def test_the_cpu_between_samples_counts_bursts_and_falls_back_to_dockers_figure() -> None:
    # 3 s of CPU over 30 s: 10 % of one CPU, although the last second was quiet
    assert cpu_between((1.0, 100.0), (4.0, 130.0), 0.5) == 10.0
    assert cpu_between((0.0, 100.0), (0.0, 130.0), 80.0) == 80.0  # busy just now
    assert cpu_between(None, (5.0, 130.0), 2.0) == 2.0  # a first reading
    assert cpu_between((9.0, 100.0), (1.0, 130.0), 3.0) == 3.0  # restarted
    assert cpu_between((1.0, 130.0), (2.0, 130.0), 4.0) == 4.0  # no time passed


def test_the_reasons_say_what_was_measured_how_long_and_when_it_ends() -> None:
    warned = warning_reason(RULE, 1796108080.0)
    assert warned == ("idle: CPU below 5% for 10m; terminates in 1m (at 06:54:40 UTC) unless used")
    assert warning_reason(RULE, 1796108080.0, gpus=True).startswith(
        "idle: CPU below 5% and GPU below 10% for 10m;"
    )
    assert end_reason(RULE, 660.0) == "idle: CPU below 5% for 11m, terminated"


def test_batch_sessions_are_exempt_until_their_command_has_a_result() -> None:
    def session(command: str | None, job: Job | None) -> Session:
        return Session(id="s1", spec=LaunchSpec.create(image="i", command=command), job=job)

    assert not batch_running(session(None, None))
    assert batch_running(session("sleep 9", None))
    assert batch_running(session("sleep 9", Job()))  # waiting for its first try
    assert batch_running(session("sleep 9", Job().start_try(1.0)))
    assert not batch_running(session("sleep 9", Job(state=JobState.SUCCEEDED)))
