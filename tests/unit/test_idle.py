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


def test_a_running_exec_keeps_a_session_and_the_deadline_counts_from_the_last_one() -> None:
    running = Activity(last_activity=1000.0, running_execs=1, last_exec=900.0)
    assert idle_deadline(running, 60) is None
    assert not should_terminate(running, 60, now=1e12)
    # ended at 1500: the kernel's last message (1000) no longer sets the deadline
    ended = Activity(last_activity=1000.0, last_exec=1500.0)
    assert idle_deadline(ended, 60) == 1560.0
    assert not should_terminate(ended, 60, now=1100.0)  # past the kernel's own deadline
    assert should_terminate(ended, 60, now=1560.0)
    # an exec long ago changes nothing; no exec ever neither
    assert idle_deadline(Activity(1000.0, last_exec=10.0), 60) == 1060.0
    assert idle_deadline(Activity(1000.0, last_exec=None), 60) == 1060.0
