"""Tests of jupyter_cluster.core.state: the session life cycle."""

from __future__ import annotations

import itertools

import pytest

from jupyter_cluster.core.state import (
    ACTIVE,
    ALLOCATING,
    FINAL,
    ContainerStatus,
    SessionStatus,
    can_transition,
    check_transition,
)
from jupyter_cluster.errors import Conflict

S = SessionStatus

# Every allowed move between two different states; everything else is refused.
ALLOWED = {
    (S.PENDING, S.PREPARING),
    (S.PENDING, S.CANCELLED),
    (S.PENDING, S.ERROR),
    (S.PREPARING, S.RUNNING),
    (S.PREPARING, S.ERROR),
    (S.PREPARING, S.TERMINATING),
    (S.PREPARING, S.CANCELLED),
    (S.RUNNING, S.RUNNING_DEGRADED),
    (S.RUNNING, S.TERMINATING),
    (S.RUNNING, S.ERROR),
    (S.RUNNING_DEGRADED, S.RUNNING),
    (S.RUNNING_DEGRADED, S.TERMINATING),
    (S.RUNNING_DEGRADED, S.ERROR),
    (S.TERMINATING, S.TERMINATED),
    (S.TERMINATING, S.ERROR),
    (S.ERROR, S.TERMINATING),
    (S.ERROR, S.TERMINATED),
}


@pytest.mark.parametrize(("old", "new"), list(itertools.product(S, S)))
def test_transition_table(old: SessionStatus, new: SessionStatus) -> None:
    expected = old == new or (old, new) in ALLOWED
    assert can_transition(old, new) is expected
    if expected:
        check_transition(old, new)
    else:
        with pytest.raises(Conflict) as info:
            check_transition(old, new)
        assert str(info.value) == f"a {old.value} session cannot become {new.value}"


def test_the_happy_path_is_allowed() -> None:
    path = [S.PENDING, S.PREPARING, S.RUNNING, S.TERMINATING, S.TERMINATED]
    for old, new in itertools.pairwise(path):
        check_transition(old, new)


def test_final_states_lead_nowhere() -> None:
    assert {S.TERMINATED, S.CANCELLED} == FINAL
    for final in FINAL:
        assert not any(can_transition(final, other) for other in S if other != final)


def test_running_never_goes_back_to_pending() -> None:
    assert not can_transition(S.RUNNING, S.PENDING)
    assert not can_transition(S.RUNNING, S.PREPARING)


def test_state_groups() -> None:
    assert {S.PREPARING, S.RUNNING, S.RUNNING_DEGRADED, S.TERMINATING} == ALLOCATING
    assert set(S) - FINAL == ACTIVE
    assert S.PENDING in ACTIVE and S.ERROR in ACTIVE
    assert S.PENDING not in ALLOCATING  # pending sessions hold no room


def test_statuses_print_and_parse_as_their_values() -> None:
    assert str(S.RUNNING_DEGRADED) == "RUNNING_DEGRADED"
    assert S("CANCELLED") is S.CANCELLED
    assert str(ContainerStatus.EXITED) == "EXITED"
    assert ContainerStatus("RUNNING") == "RUNNING"


def test_an_oom_kill_in_a_running_container_says_when_how_often_and_what_to_do() -> None:
    """#14 item 2: the status reason of a container that lost a process to the
    out-of-memory killer but runs on."""
    from jupyter_cluster.core.state import oom_reason

    at = 1796108020.4  # 2026-12-01T06:53:40Z
    assert oom_reason(1, at, 64 * 1024**2) == (
        "a process was killed by the out-of-memory killer at 2026-12-01T06:53:40Z: it needed "
        "more than the container's memory limit (64m); launch with more --mem"
    )
    assert oom_reason(2, at, 1536 * 1024**2) == (
        "a process was killed by the out-of-memory killer at 2026-12-01T06:53:40Z (2 so far): "
        "it needed more than the container's memory limit (1.5g); launch with more --mem"
    )
    assert "memory limit; launch" in oom_reason(1, at)  # the limit unknown
