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
