"""Launch profiles without a server: config parsing, the merge rule (profile, then the
request's own fields), group visibility and the reason a policy cannot launch one."""

from __future__ import annotations

import pytest

from jupyter_cluster.core.launch_options import validate
from jupyter_cluster.core.launch_spec import LaunchSpec
from jupyter_cluster.core.policy import LaunchPolicy
from jupyter_cluster.core.profiles import (
    check_values,
    listing,
    make_profile,
    parse_profiles,
    resolve,
)
from jupyter_cluster.errors import InvalidRequest
from tests.support.constants import GIB, IMAGE, MIB

POLICY = LaunchPolicy(
    images=(IMAGE,),
    max_size=4,
    max_cpu=2.0,
    max_mem=2 * GIB,
    max_shm=256 * MIB,
    max_gpu=1,
    resource_groups=("default",),
    folders=("data",),
)
SITE = {
    "pair": {"description": "two small containers", "fields": {"size": 2, "cpu": 0.5}},
    "big": {"description": "too big here", "fields": {"size": 9}},
    "gpu": {"groups": ["ml"], "fields": {"gpu": 1, "mounts": ["data:ro"]}},
}


def test_a_launch_takes_the_profile_then_its_own_fields() -> None:
    profiles, problems = parse_profiles(SITE)
    assert problems == []
    body = resolve({"profile": "pair", "cpu": 1.5, "start_kernel": True}, profiles)
    assert body == {"size": 2, "cpu": 1.5, "start_kernel": True}
    fields, start_kernel = validate(body, POLICY)
    assert (fields["size"], fields["cpu"], start_kernel) == (2, 1.5, True)


def test_a_body_without_a_profile_is_unchanged() -> None:
    profiles, _ = parse_profiles(SITE)
    assert resolve({"size": 3}, profiles) == {"size": 3}
    assert resolve({"profile": None, "size": 3}, profiles) == {"size": 3}


def test_an_unknown_or_hidden_profile_is_refused_naming_the_field() -> None:
    profiles, _ = parse_profiles(SITE)
    for name in ("nope", "gpu", 3):
        with pytest.raises(InvalidRequest) as info:
            resolve({"profile": name}, profiles)
        assert info.value.field == "profile"
        assert "known profiles: pair, big" in str(info.value)
    assert resolve({"profile": "gpu"}, profiles, groups=["ml"])["gpu"] == 1


def test_the_listing_disables_what_the_policy_cannot_launch_with_the_reason() -> None:
    profiles, _ = parse_profiles(SITE)
    rows = {row["name"]: row for row in listing(profiles, POLICY)}
    assert set(rows) == {"pair", "big"}  # gpu is for the ml group only
    assert rows["pair"]["disabled"] is False and rows["pair"]["reason"] == ""
    assert rows["big"]["disabled"] is True
    assert rows["big"]["reason"] == "size: must be 1 to 4, got 9"
    no_folder = LaunchPolicy(**{**POLICY.__dict__, "folders": ()})
    ml = {row["name"]: row for row in listing(profiles, no_folder, groups=["ml"])}
    assert ml["gpu"]["disabled"] and ml["gpu"]["reason"].startswith("mounts: no data folder")


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("bad name!", {}, "not a profile name"),
        ("p", [], "expected an object"),
        ("p", {"colour": 1}, "unknown key 'colour'"),
        ("p", {"fields": {"sizes": 2}}, "'sizes' is not a launch field"),
        ("p", {"fields": []}, "fields must be an object"),
        ("p", {"groups": "ml"}, "groups must be a list"),
        ("p", {"description": 5}, "description must be text"),
    ],
)
def test_a_wrong_profile_is_refused_saying_what_is_wrong(
    name: str, value: object, says: str
) -> None:
    with pytest.raises(InvalidRequest, match=says):
        make_profile(name, value)
    profiles, problems = parse_profiles({name: value, "ok": {}})
    assert list(profiles) == ["ok"] and len(problems) == 1 and says in problems[0]


def test_the_notebook_form_fills_its_fields_from_a_chosen_profile() -> None:
    from jupyter_cluster.core.launch_form import describe
    from jupyter_cluster.widgets import LaunchForm

    profiles, _ = parse_profiles(
        {**SITE, "envy": {"fields": {"env": {"A": "1"}, "max_lifetime": "1h", "mem": "512m"}}}
    )
    schema = {**describe(POLICY), "profiles": listing(profiles, POLICY)}
    form = LaunchForm(schema=schema, agents=[], ask_engine=False)
    assert [label for label, _ in form.profile.options][1:] == [
        "pair: two small containers",
        "big: too big here (unavailable)",
        "envy",
    ]
    form.profile.value = "pair"
    assert (form.size.value, form.cpu.value) == (2, 0.5)
    form.profile.value = "envy"
    values = form.values()
    assert values["env"] == ["A=1"] and values["max_lifetime"] == "1h" and values["mem"] == "512m"
    form.profile.value = "big"
    assert "size: must be 1 to 4, got 9" in form.error.value and form.launch_button.disabled
    assert form.size.value == 2  # nothing filled


def test_the_notebook_form_launches_a_profiles_fields_it_has_no_widget_for() -> None:
    """A profile's apps (and name, retries) were dropped by the notebook form."""
    from jupyter_cluster.core.launch_form import describe
    from jupyter_cluster.widgets import LaunchForm

    board = {
        "name": "board",
        "apps": {"tensorboard": 6006},
        "command": "train",
        "retries": 2,
        "start_kernel": True,
    }
    profiles, problems = parse_profiles(
        {"board": {"fields": board}, "plain": {"fields": {}}, "big": {"fields": {"size": 9}}}
    )
    assert problems == []
    schema = {**describe(POLICY), "profiles": listing(profiles, POLICY)}
    form = LaunchForm(schema=schema, agents=[], ask_engine=False)
    form.profile.value = "board"
    values = form.values()
    assert values["apps"] == {"tensorboard": 6006} and values["name"] == "board"
    assert (values["command"], values["retries"]) == ("train", 2)
    assert "start_kernel" not in values  # the notebook form starts no kernel
    spec = LaunchSpec.create(**values)
    assert (spec.apps, spec.name, spec.retries) == ((("tensorboard", 6006),), "board", 2)
    form.profile.value = "big"  # unavailable: fills nothing, as in the Lab dialog
    assert form.values()["apps"] == {"tensorboard": 6006} and form.launch_button.disabled
    for other in ("plain", ""):  # another profile, or none, carries nothing of it
        form.profile.value = "board"
        form.profile.value = other
        assert "apps" not in form.values() and "retries" not in form.values()


def test_a_saved_profile_may_go_over_limits_but_not_hold_impossible_values() -> None:
    over_limits = {  # any site's limits may allow these, or the launch may add to them
        "size": 99,
        "cpu": 64,
        "mem": "2t",
        "image": "someone/else:1",
        "resource_group": "gpus",
        "mounts": ["data:ro"],
        "env": {"BACKENDAI_EXTRA": "1"},
        "retries": 2,  # its command given at launch
    }
    saved = make_profile("big", {"fields": over_limits})
    assert check_values(saved) is saved
    for fields, field, says in (
        ({"size": 0}, "size", "must be at least 1, got 0"),
        ({"cpu": -1}, "cpu", "must be a finite number above 0"),
        ({"mem": "0"}, "mem", "must be at least 6m, got 0"),
        ({"mode": "ring"}, "mode", "unknown cluster mode 'ring'"),
        ({"mounts": ["a b"]}, "mounts", "'a b' is not a valid folder name"),
        ({"env": {"1A": "x"}}, "env", "'1A' is not a variable name"),
        ({"max_lifetime": "5x"}, "max_lifetime", "'5x' is not a duration"),
        ({"retries": -1}, "retries", "give 0 to 10, got -1"),
        ({"image": "Someone/Else"}, "image", "image names are lower case"),
    ):
        with pytest.raises(InvalidRequest) as refused:
            check_values(make_profile("odd", {"fields": fields}))
        assert refused.value.field == field
        assert str(refused.value).startswith(f"profile odd: {field}: ")
        assert says in str(refused.value), str(refused.value)
