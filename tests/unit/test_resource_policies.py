"""Resource policies: the keys, the resolution rule (a user's entry wins, else the most
generous of their groups', else the default), and the quota a policy gives the store."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jupyter_cluster.core.models import LaunchSpec, Session
from jupyter_cluster.core.naming import plan_containers
from jupyter_cluster.core.resource_policies import (
    KEYS,
    LISTS,
    ZERO_UNLIMITED,
    ResourcePolicy,
    check_table,
    most_generous,
    parse_fields,
    resolve,
)
from jupyter_cluster.errors import InvalidRequest

GiB = 1024**3
DEFAULT = ResourcePolicy(sessions=4, max_size=4, max_cpu=2.0, max_mem=4 * GiB, max_shm=GiB)


def session(size: int = 1, cpu: float = 1.0, gpu: int = 0, group: str = "default") -> Session:
    sid = str(uuid.uuid4())
    spec = LaunchSpec.create(image="img", size=size, cpu=cpu, gpu=gpu, resource_group=group)
    return Session(id=sid, spec=spec, containers=plan_containers(sid, size), owner="ada")


def test_keys_are_parsed_and_wrong_ones_named() -> None:
    fields = parse_fields(
        {"mem": "64g", "max_lifetime": "2h", "images": ["reg.example/team/", "x"], "max_gpu": 2}
    )
    assert fields == {
        "mem": 64 * GiB,
        "max_lifetime": 7200.0,
        "images": ("reg.example/team/", "x"),
        "max_gpu": 2,
    }
    with pytest.raises(InvalidRequest, match="nope: unknown limit"):
        parse_fields({"nope": 1})
    with pytest.raises(InvalidRequest, match=r"users\.bob: max_cpu: expected a CPU count"):
        check_table({"users": {"bob": {"max_cpu": "lots"}}})
    with pytest.raises(InvalidRequest, match="sessions: expected a whole number"):
        parse_fields({"sessions": -1})
    with pytest.raises(InvalidRequest, match="unknown section"):
        check_table({"people": {}})
    for key in ("max_lifetime", "idle_timeout"):  # null is not "no limit": 0 is
        with pytest.raises(InvalidRequest, match=f"{key}: give a duration such as 8h, or 0"):
            parse_fields({key: None})
    assert parse_fields({"max_lifetime": 0}) == {"max_lifetime": 0.0}
    check_table({"default": {"sessions": 2}, "groups": {"gpu": {"max_gpu": 4}}})


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("value", [False, True])
def test_a_boolean_is_no_limit(key: str, value: bool) -> None:
    """``false`` equals 0 in Python; as a limit it is refused, not taken as 0 (the
    API's fuzzing found ``{"max_lifetime": false}`` accepted as "no limit")."""
    with pytest.raises(InvalidRequest, match=f"^{key}: "):
        parse_fields({key: value})


def test_a_users_entry_wins_even_when_stricter() -> None:
    users = {"ada": {"sessions": 1}}
    groups = {"gpu": {"sessions": 0, "max_gpu": 8}}
    got = resolve("ada", ["gpu"], DEFAULT, users, groups)
    assert got.source == "user ada" and got.policy.sessions == 1 and got.policy.max_gpu == 0
    got = resolve("bob", ["gpu", "other"], DEFAULT, users, groups)
    assert got.source == "groups gpu" and got.policy.sessions == 0 and got.policy.max_gpu == 8
    assert resolve("cy", ["other"], DEFAULT, users, groups) == (DEFAULT, "default")


def test_the_policy_quota_bounds_each_session_and_the_totals() -> None:
    policy = DEFAULT.updated({"cpu": 3, "max_gpu": 1, "resource_groups": ["default"]})
    quota = policy.quota()
    assert quota.refusal([], session(cpu=2)) is None
    assert "at most 2 CPUs per container" in (quota.refusal([], session(cpu=2.5)) or "")
    assert "at most 1 GPUs" in (quota.refusal([], session(gpu=2)) or "")
    assert "resource group 'gpu'" in (quota.refusal([], session(group="gpu")) or "")
    assert "at most 4 containers" in (quota.refusal([], session(size=5, cpu=0.5)) or "")
    assert "over the limit of 3" in (quota.refusal([session(cpu=2)], session(cpu=2)) or "")
    images = DEFAULT.updated({"images": ["reg.example/team/", "base:1"]})
    assert images.allows_image("reg.example/team/x:2") and images.allows_image("base:1")
    assert not images.allows_image("reg.example/other/x") and not images.allows_image("base")


def test_priority_is_checked_within_the_range() -> None:
    policy = DEFAULT.updated({"priority": 2})
    assert policy.max_priority == 2  # the base is always within the range
    assert policy.check_priority(1) == 1
    with pytest.raises(InvalidRequest, match="0 to 2"):
        policy.check_priority(3)


values = st.fixed_dictionaries(
    {},
    optional={
        "sessions": st.integers(0, 5),
        "cpu": st.sampled_from([0, 1, 2.5, 8]),
        "gpu": st.integers(0, 4),
        "max_size": st.integers(1, 8),
        "max_cpu": st.sampled_from([0.5, 1, 4]),
        "max_mem": st.sampled_from(["1g", "8g"]),
        "max_gpu": st.integers(0, 4),
        "max_lifetime": st.sampled_from([0, "1h", "8h"]),
        "resource_groups": st.lists(st.sampled_from(["a", "b", "c"]), max_size=2),
        "images": st.lists(st.sampled_from(["x", "y/"]), max_size=2),
        "priority": st.integers(0, 3),
    },
)


def allows_at_least(big: ResourcePolicy, small: ResourcePolicy) -> bool:
    """Whether ``big`` allows everything ``small`` does, key by key."""
    for key in KEYS:
        b, s = getattr(big, key), getattr(small, key)
        if key in ZERO_UNLIMITED:
            ok = not b or (bool(s) and b >= s)
        elif key in LISTS:
            ok = not b or (bool(s) and set(s) <= set(b))
        else:
            ok = b >= s
        if not ok:
            return False
    return True


@given(
    user=st.one_of(st.none(), values),
    entries=st.dictionaries(st.sampled_from(["g1", "g2", "g3"]), values, max_size=3),
    member_of=st.lists(st.sampled_from(["g1", "g2", "g3", "none"]), max_size=4),
)
def test_resolution_rule(
    user: dict[str, object] | None, entries: dict[str, dict[str, object]], member_of: list[str]
) -> None:
    users = {"ada": user} if user is not None else {}
    got = resolve("ada", member_of, DEFAULT, users, entries)
    mine = [DEFAULT.updated(entries[g]) for g in sorted(set(member_of)) if g in entries]
    if user is not None:  # the user's own entry, whatever the groups say
        assert got.policy == DEFAULT.updated(user) and got.source == "user ada"
    elif mine:  # at least as generous as each group, and no more than the best of each key
        assert all(allows_at_least(got.policy, p) for p in mine)
        for key in KEYS:
            value = getattr(got.policy, key)
            if key in ZERO_UNLIMITED and value:
                assert value in [getattr(p, key) for p in mine]
        assert got.policy == most_generous(list(reversed(mine)))  # order does not matter
    else:
        assert got == (DEFAULT, "default")
