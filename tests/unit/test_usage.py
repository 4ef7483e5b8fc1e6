"""Usage accounting (core.usage): allocation * running time, clipped to a period.

Property tests on intervals: splitting a period anywhere adds up to the whole,
usage never exceeds the allocation times the period, and only RUNNING time counts.
A store round trip shows the engine's history gives the same figures.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jupyter_cluster.core.models import LaunchSpec, Session
from jupyter_cluster.core.naming import plan_containers
from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.core.usage import (
    GIB,
    Usage,
    parse_period,
    parse_time,
    per_user,
    report,
    session_usage,
)
from jupyter_cluster.engine.store.sessions import Store
from jupyter_cluster.errors import InvalidRequest

T0 = 1_000_000.0


def ran(
    owner: str = "alice",
    size: int = 2,
    cpu: float = 1.5,
    gpu: int = 1,
    created: float = T0,
    wait: float = 60.0,
    ended: float | None = T0 + 60 + 3600,
    status: SessionStatus = SessionStatus.TERMINATED,
) -> Session:
    """A session of ``size`` containers (2 GiB each) created at ``created``, RUNNING
    ``wait`` s later (queued 10 s, the rest preparing), ended at ``ended``."""
    sid = str(uuid.uuid4())
    spec = LaunchSpec.create(image="img", size=size, cpu=cpu, mem="2g", gpu=gpu)
    timings = {"queue": 10.0, "create": wait - 10.0 - 1.0, "bootstrap": 1.0, "kernel_ready": 9.0}
    return Session(
        id=sid,
        spec=spec,
        containers=plan_containers(sid, size),
        owner=owner,
        status=status,
        created_at=created,
        ended_at=ended,
        timings=timings,
    )


def test_an_hour_of_two_containers_is_allocation_times_an_hour() -> None:
    used = session_usage(ran(), now=T0 + 99999)
    assert used.sessions == 1
    assert used.running_hours == pytest.approx(1.0)  # the 60 s before RUNNING are not charged
    assert used.cpu_hours == pytest.approx(3.0)  # 2 containers * 1.5 CPU * 1 h
    assert used.mem_gib_hours == pytest.approx(4.0)  # 2 * 2 GiB * 1 h
    assert used.gpu_hours == pytest.approx(2.0)


def test_a_session_still_running_is_charged_until_now() -> None:
    live = ran(ended=None, status=SessionStatus.RUNNING)
    assert session_usage(live, now=T0 + 60 + 1800).running_hours == pytest.approx(0.5)
    assert session_usage(live, now=T0 + 30) == Usage()  # still preparing then


def test_a_session_that_never_ran_costs_nothing() -> None:
    failed = ran(status=SessionStatus.ERROR)
    failed = failed.with_(timings={"queue": 1.0, "create": 2.0})  # no bootstrap: never RUNNING
    cancelled = ran(status=SessionStatus.CANCELLED).with_(timings={})
    assert session_usage(failed, now=T0 + 99999) == Usage()
    assert session_usage(cancelled, now=T0 + 99999) == Usage()


def test_per_user_sums_each_owner_and_skips_those_without_usage() -> None:
    sessions = [
        ran("alice"),
        ran("alice", gpu=0),
        ran("bob", size=1),
        ran("carol").with_(timings={}),
    ]
    totals = per_user(sessions, now=T0 + 99999)
    assert list(totals) == ["alice", "bob"]
    assert totals["alice"].sessions == 2
    assert totals["alice"].gpu_hours == pytest.approx(2.0)
    assert totals["bob"].cpu_hours == pytest.approx(1.5)
    reply = report(sessions, now=T0 + 99999, since=T0 + 60 + 3000)
    assert [u["user"] for u in reply["users"]] == ["alice", "bob"]  # type: ignore[index]
    assert len(reply["sessions"]) == 3  # type: ignore[arg-type]


times = st.floats(min_value=0, max_value=10 * 86400, allow_nan=False)


@given(
    created=times,
    wait=st.floats(min_value=1.5, max_value=3600),
    length=st.floats(min_value=0, max_value=86400),
    cut=times,
    since=st.none() | times,
    until=st.none() | times,
)
def test_usage_is_additive_over_a_split_period_and_bounded_by_it(
    created: float, wait: float, length: float, cut: float, since: float | None, until: float | None
) -> None:
    s = ran(created=T0 + created, wait=wait, ended=T0 + created + wait + length)
    now = T0 + 20 * 86400
    lo = None if since is None else T0 + since
    hi = None if until is None else T0 + until
    whole = session_usage(s, now, lo, hi)
    at = T0 + cut
    if (lo is None or lo <= at) and (hi is None or at <= hi):
        left, right = session_usage(s, now, lo, at), session_usage(s, now, at, hi)
        assert left.cpu_hours + right.cpu_hours == pytest.approx(whole.cpu_hours, abs=1e-9)
        assert left.gpu_hours + right.gpu_hours == pytest.approx(whole.gpu_hours, abs=1e-9)
    period = (min(now, hi or now) - max(T0, lo or T0)) / 3600
    assert 0 <= whole.running_hours <= max(0.0, period) + 1e-9
    assert whole.running_hours <= length / 3600 + 1e-9
    assert whole.cpu_hours == pytest.approx(whole.running_hours * 2 * 1.5)
    assert whole.mem_gib_hours == pytest.approx(whole.running_hours * 2 * 2 * GIB / GIB)


def test_the_stores_history_gives_the_same_figures(tmp_path: Path) -> None:
    store = Store(tmp_path / "state.db")
    try:
        s = ran()
        store.insert_session(s)
        back = store.get(s.id)
        assert back is not None
        assert session_usage(back, now=T0 + 99999) == session_usage(s, now=T0 + 99999)
    finally:
        store.close()


def test_period_bounds_are_dates_date_times_or_epoch_seconds() -> None:
    assert parse_time("2026-01-31", "since") == 1769817600.0  # midnight UTC
    assert parse_time("2026-01-31T01:00+01:00", "since") == 1769817600.0
    assert parse_time("1769817600", "until") == 1769817600.0
    assert parse_time(None, "since") is None and parse_time(" ", "since") is None
    for bad in ("yesterday", "nan", "inf", "2026-13-01"):
        with pytest.raises(InvalidRequest) as caught:
            parse_time(bad, "until")
        assert caught.value.field == "until"


def test_a_period_that_ends_before_it_starts_is_refused() -> None:
    assert parse_period("2026-01-01", "2026-01-31") == (1767225600.0, 1769817600.0)
    assert parse_period(None, "2026-01-31") == (None, 1769817600.0)
    assert parse_period("2026-01-31", None) == (1769817600.0, None)
    for since, until in (("2026-01-31", "2026-01-01"), ("2026-01-31", "2026-01-31")):
        with pytest.raises(InvalidRequest) as caught:
            parse_period(since, until, ("--since", "--until"))
        assert caught.value.field == "--until"
        assert caught.value.message == (
            f"--until: {until!r} is not after --since {since!r}; "
            "give an --until later than the --since"
        )
