"""Batch jobs and time limits, the pure parts (#25 items 1, 2): the input checks of
``command``, ``max_lifetime`` and ``retries``, a job's states through its tries, when
a lifetime warns and ends, ``wait``'s exit codes, the listing's job column; and the
lifetime watch and job records on a real store (no Docker)."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_cluster.cli.format import session_details
from jupyter_cluster.core.batch import (
    Job,
    JobState,
    job_summary,
    parse_command,
    parse_retries,
    wait_code,
)
from jupyter_cluster.core.models import LaunchSpec, Session
from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.core.time_limits import (
    LIFETIME_EXIT,
    check_site_limit,
    effective_lifetime,
    format_duration,
    lifetime_due,
    parse_lifetime,
)
from jupyter_cluster.engine.lifetime import LifetimeWatch
from jupyter_cluster.engine.store.jobs import change_job
from jupyter_cluster.engine.store.sessions import Store
from jupyter_cluster.errors import InvalidRequest

IMAGE = "jupyter-cluster/kernel:latest"


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        (90, 90.0),
        ("90", 90.0),
        ("90s", 90.0),
        ("30m", 1800.0),
        ("2h", 7200.0),
        ("1d", 86400.0),
        (" 1.5H ", 5400.0),
        (None, None),
        ("", None),
        (0, None),
    ],
)
def test_lifetimes_parse(text: object, seconds: float | None) -> None:
    assert parse_lifetime(text) == seconds


@pytest.mark.parametrize("bad", ["soon", "-5m", "5x", "1e999", True, False, [], -1, float("inf")])
def test_bad_lifetimes_name_the_field(bad: object) -> None:
    with pytest.raises(InvalidRequest, match=r"^max_lifetime: .*90s, 30m, 2h") as err:
        parse_lifetime(bad)
    assert err.value.field == "max_lifetime"


def test_commands_and_retries_are_checked() -> None:
    assert parse_command("python train.py") == "python train.py"
    assert parse_command(None) is None and parse_command("") is None
    for bad in ("   ", 3, "a\0b", "x" * (64 * 1024 + 1)):
        with pytest.raises(InvalidRequest) as err:
            parse_command(bad)
        assert err.value.field == "command"
    assert parse_retries("2") == 2 and parse_retries(0) == 0
    for bad in (-1, 11, "two", 1.5, True):
        with pytest.raises(InvalidRequest) as err:
            parse_retries(bad)
        assert err.value.field == "retries"


def test_the_spec_carries_the_batch_fields_through_the_store_shape() -> None:
    spec = LaunchSpec.create(image=IMAGE, command="make", max_lifetime="30m", retries="1")
    assert (spec.command, spec.max_lifetime, spec.retries) == ("make", 1800.0, 1)
    assert LaunchSpec.from_dict(spec.to_dict()) == spec
    session = Session(id="s1", spec=spec)
    again = Session.from_record(session.to_record())
    assert again.job == Job()  # a batch session waits for its first try
    public = session.to_dict()
    assert public["command"] == "make" and public["job"]["state"] == "waiting"
    assert Session.from_public(public).spec.command == "make"
    assert Session(id="s2", spec=LaunchSpec.create(image=IMAGE)).to_dict()["job"] is None


def test_the_site_limit_caps_a_sessions_own() -> None:
    check_site_limit(3600, 7200)
    check_site_limit(99999, 0)  # no site limit
    with pytest.raises(
        InvalidRequest, match=r"max_lifetime: 3h is more than this site allows \(2h\)"
    ):
        check_site_limit(3 * 3600, 7200)
    assert effective_lifetime(None, 7200) == 7200
    assert effective_lifetime(60, 7200) == 60
    assert effective_lifetime(None, 0) is None


def test_a_job_succeeds_fails_or_tries_again() -> None:
    job = Job().start_try(100.0)
    assert job.state is JobState.RUNNING and job.current and job.current.number == 1
    assert job.after_exit(0, 0, 105.0).state is JobState.SUCCEEDED
    failed = job.after_exit(3, 0, 104.0)
    assert (failed.state, failed.exit_code, failed.duration) == (JobState.FAILED, 3, 4.0)
    assert failed.end_reason() == "batch job failed with exit code 3"
    again = job.after_exit(3, 2, 104.0)
    assert again.state is JobState.WAITING and again.exit_code is None
    second = again.start_try(110.0).after_exit(0, 2, 111.0)
    assert second.state is JobState.SUCCEEDED and len(second.tries) == 2
    assert second.end_reason() == "batch job succeeded after 2 tries"
    third = again.start_try(110.0).after_exit(1, 2, 111.0).start_try(112.0)
    last = third.after_exit(7, 2, 113.0)
    assert (last.state, last.exit_code, len(last.tries)) == (JobState.FAILED, 7, 3)
    with pytest.raises(ValueError):
        last.start_try(120.0)
    with pytest.raises(ValueError):
        Job().after_exit(0, 0, 1.0)


def test_a_stopped_job_keeps_why_and_a_finished_one_its_result() -> None:
    running = Job().start_try(10.0)
    stopped = running.stopped("reached its maximum lifetime of 5s", 15.0)
    assert stopped.state is JobState.STOPPED and stopped.duration == 5.0
    done = running.after_exit(0, 0, 12.0)
    assert done.stopped("whatever", 20.0) == done
    assert Job.from_dict(stopped.to_dict()) == stopped


def test_a_job_given_up_fails_with_its_last_code_and_says_why() -> None:
    waiting = Job().start_try(10.0).after_exit(3, 2, 12.0)  # two retries left
    gone = waiting.given_up("sub2 was killed by signal 9 (exit code 137)")
    assert (gone.state, gone.exit_code, len(gone.tries)) == (JobState.FAILED, 3, 1)
    assert gone.end_reason() == (
        "batch job failed with exit code 3; "
        "not tried again: sub2 was killed by signal 9 (exit code 137)"
    )
    assert Job.from_dict(gone.to_dict()) == gone
    twice = waiting.start_try(13.0).after_exit(5, 2, 14.0).given_up("sub1 is gone")
    assert twice.end_reason() == (
        "batch job failed with exit code 5 after 2 tries; not tried again: sub1 is gone"
    )
    for not_waiting in (
        Job(),
        Job().start_try(1.0),
        gone,
        Job().start_try(1.0).after_exit(0, 1, 2.0),
    ):
        with pytest.raises(ValueError):
            not_waiting.given_up("why")


def test_lifetimes_warn_before_they_end() -> None:
    assert lifetime_due(0, None, 10**9) == ""
    assert lifetime_due(0, 3600, 3000) == ""
    assert lifetime_due(0, 3600, 3541) == "warn"  # the last minute
    assert lifetime_due(0, 3600, 3600) == "end"
    assert lifetime_due(0, 10, 8.9) == "" and lifetime_due(0, 10, 9.0) == "warn"  # last 10 %
    assert format_duration(5400) == "1h30m" and format_duration(5) == "5s"


def test_wait_codes() -> None:
    failed = Job().start_try(0).after_exit(3, 0, 1)
    assert wait_code("TERMINATED", "batch job failed with exit code 3", failed) == 3
    assert wait_code("TERMINATED", "reached its maximum lifetime of 5s", None) == LIFETIME_EXIT
    stopped = Job().start_try(0).stopped("reached its maximum lifetime of 5s", 5)
    assert wait_code("TERMINATED", "reached its maximum lifetime of 5s", stopped) == 124
    assert wait_code("TERMINATED", "terminated", stopped) == 124  # the job kept why
    by_hand = Job().start_try(0).stopped("terminated", 5)
    assert wait_code("TERMINATED", "terminated", by_hand) == 1
    assert wait_code("TERMINATED", "terminated", None) == 0
    assert wait_code("ERROR", "bootstrap failed", None) == 1


def test_the_job_column() -> None:
    assert job_summary(None, 0) == ""
    assert job_summary(Job(), 0) == "waiting"
    assert job_summary(Job().start_try(100), 112) == "running 12s"
    failed = Job().start_try(0).after_exit(3, 1, 2).start_try(3).after_exit(3, 1, 7)
    assert job_summary(failed, 50) == "failed 3 in 7s (2 tries)"


def test_show_gives_the_retries_a_job_has() -> None:
    def job_line(retries: int) -> list[str]:
        spec = LaunchSpec.create(image=IMAGE, command="python3 train.py", retries=retries)
        shown = session_details(Session(id="s1", spec=spec, job=Job()))
        return [line for line in shown.splitlines() if line.startswith("job ")]

    assert job_line(0) == ["job       waiting"]
    assert job_line(1) == ["job       waiting (up to 1 retry)"]
    assert job_line(2) == ["job       waiting (up to 2 retries)"]


def _store_with(tmp_path: Path, spec: LaunchSpec, created: float) -> tuple[Store, Session]:
    store = Store(tmp_path / "cluster.db")
    session = Session(id="s1", spec=spec, status=SessionStatus.RUNNING, created_at=created)
    store.insert_session(session)
    return store, store.require("s1")


async def test_the_lifetime_watch_warns_then_terminates(tmp_path: Path) -> None:
    spec = LaunchSpec.create(image=IMAGE, command="sleep 100", max_lifetime="1h")
    store, _ = _store_with(tmp_path, spec, created=1000.0)
    ended: list[tuple[str, str]] = []

    async def terminate(sid: str, reason: str) -> Session:
        ended.append((sid, reason))
        store.set_status(sid, SessionStatus.TERMINATING)
        return store.set_status(sid, SessionStatus.TERMINATED, reason)

    watch = LifetimeWatch(store, terminate, lambda: 0.0)
    change_job(store, "s1", lambda j: j.start_try(1000.0))
    assert await watch.sweep(now=1000.0 + 3000) == 0
    assert store.require("s1").status_reason == ""
    assert await watch.sweep(now=1000.0 + 3560) == 0
    warned = store.require("s1")
    assert warned.status is SessionStatus.RUNNING
    assert warned.status_reason.startswith("will reach its maximum lifetime of 1h at ")
    assert await watch.sweep(now=1000.0 + 3600) == 1
    assert ended == [("s1", "reached its maximum lifetime of 1h")]
    done = store.require("s1")
    assert done.status is SessionStatus.TERMINATED
    assert done.job is not None and done.job.state is JobState.STOPPED
    assert done.job.reason == "reached its maximum lifetime of 1h"
    store.close()


async def test_the_site_limit_ends_interactive_sessions_too(tmp_path: Path) -> None:
    store, _ = _store_with(tmp_path, LaunchSpec.create(image=IMAGE), created=1.0)

    async def terminate(sid: str, reason: str) -> Session:
        store.set_status(sid, SessionStatus.TERMINATING)
        return store.set_status(sid, SessionStatus.TERMINATED, reason)

    assert await LifetimeWatch(store, terminate, lambda: 0.0).sweep(now=10**9) == 0
    assert await LifetimeWatch(store, terminate, lambda: 60.0).sweep(now=62.0) == 1
    assert store.require("s1").status_reason == "reached its maximum lifetime of 1m"
    store.close()


def test_two_watchers_never_both_start_a_try(tmp_path: Path) -> None:
    spec = LaunchSpec.create(image=IMAGE, command="true")
    store, _ = _store_with(tmp_path, spec, created=0.0)
    seen = store.require("s1").job
    assert seen is not None

    def claim(j: Job) -> Job | None:  # what each watcher does with the job it read
        return j.start_try(1.0) if j.state is JobState.WAITING and len(j.tries) == 0 else None

    assert change_job(store, "s1", claim) is not None
    assert change_job(store, "s1", claim) is None
    assert len(store.require("s1").job.tries) == 1  # type: ignore[union-attr]
    store.close()


def test_rest_bodies_carry_the_batch_fields_and_name_bad_ones() -> None:
    from jupyter_cluster.core.launch_form import describe
    from jupyter_cluster.core.launch_options import LaunchPolicy, validate

    policy = LaunchPolicy(
        images=(IMAGE,),
        max_size=4,
        max_cpu=2.0,
        max_mem=2 << 30,
        max_shm=256 << 20,
        max_gpu=0,
        resource_groups=("default",),
    )
    fields, _ = validate({"command": "make", "max_lifetime": "30m", "retries": 2}, policy)
    assert (fields["command"], fields["max_lifetime"], fields["retries"]) == ("make", 1800.0, 2)
    spec = LaunchSpec.create(**fields)
    assert (spec.command, spec.max_lifetime, spec.retries) == ("make", 1800.0, 2)
    plain, _ = validate({}, policy)
    assert (plain["command"], plain["max_lifetime"], plain["retries"]) == (None, None, 0)
    for body, field in (
        ({"retries": 1}, "retries"),
        ({"max_lifetime": "soon"}, "max_lifetime"),
        ({"retries": 99}, "retries"),
        ({"command": 5}, "command"),
    ):
        with pytest.raises(InvalidRequest) as err:
            validate(body, policy)
        assert err.value.field == field
    names = [f["name"] for f in describe(policy)["fields"]]
    assert {"command", "max_lifetime", "retries"} <= set(names)


def test_the_notebook_form_sends_a_command_and_a_lifetime() -> None:
    from jupyter_cluster.core.launch_form import describe
    from jupyter_cluster.core.launch_options import LaunchPolicy
    from jupyter_cluster.widgets import LaunchForm

    policy = LaunchPolicy(
        images=(IMAGE,),
        max_size=4,
        max_cpu=2.0,
        max_mem=2 << 30,
        max_shm=256 << 20,
        max_gpu=0,
        resource_groups=("default",),
    )
    form = LaunchForm(schema=describe(policy), agents=[], ask_engine=False)
    assert (form.values()["command"], form.values()["max_lifetime"]) == (None, None)
    form.command.value = "python train.py"
    form.lifetime.value = " 2h "
    spec = LaunchSpec.create(**form.values())
    assert (spec.command, spec.max_lifetime) == ("python train.py", 7200.0)
    form.lifetime.value = "tomorrow"
    with pytest.raises(InvalidRequest, match="max_lifetime: 'tomorrow' is not a duration"):
        LaunchSpec.create(**form.values())


def test_retries_need_a_command_and_the_site_settings_are_checked() -> None:
    from traitlets import TraitError

    from jupyter_cluster.engine.settings import ManagerSettings

    with pytest.raises(InvalidRequest, match=r"^retries: only a batch job .*--command") as err:
        LaunchSpec.create(image=IMAGE, retries=2)
    assert err.value.field == "retries"
    assert LaunchSpec.create(image=IMAGE, command="true", retries=2).retries == 2
    with pytest.raises(TraitError, match="job_poll_interval: give seconds, above 0"):
        ManagerSettings(job_poll_interval=0)
    with pytest.raises(TraitError, match="max_session_lifetime: give seconds, 0"):
        ManagerSettings(max_session_lifetime=-1)
    assert ManagerSettings(max_session_lifetime=3600).max_session_lifetime == 3600
