"""The idle rule (#14 item 5): a busy kernel or an open terminal keeps a session; an
idle one is terminated once the timeout has passed; no timeout, no deadline."""

from __future__ import annotations

from jupyter_cluster.core.idle import Activity, idle_deadline, should_terminate


def test_an_idle_session_gets_a_deadline_and_is_terminated_after_it() -> None:
    idle = Activity(last_activity=1000.0)
    assert idle_deadline(idle, 60) == 1060.0
    assert not should_terminate(idle, 60, now=1059.9)
    assert should_terminate(idle, 60, now=1060.0)


def test_use_keeps_a_session_whatever_the_time() -> None:
    for busy in (Activity(0.0, kernel_busy=True), Activity(0.0, open_terminals=1)):
        assert idle_deadline(busy, 60) is None
        assert not should_terminate(busy, 60, now=1e12)


def test_no_timeout_never_terminates() -> None:
    assert idle_deadline(Activity(0.0), 0) is None
    assert not should_terminate(Activity(0.0), 0, now=1e12)
