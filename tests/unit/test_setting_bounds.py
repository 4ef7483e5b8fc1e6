"""Numeric settings refuse what makes no sense as the configuration is read
(:mod:`jupyter_cluster.setting_bounds`): an interval of 0 spun its loop, a negative
timeout failed every call, a negative limit limited nothing, and ``work_uid = 0``
would be root. Every numeric setting of the package is walked, so one added later
without bounds fails here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from traitlets import Float, Int, TraitError
from traitlets.config import Config, Configurable
from traitlets.traitlets import ValidateHandler

from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.setting_bounds import bounded
from tests.unit.test_readme_settings import configurables, ours

#: Numeric settings checked elsewhere, and where.
CHECKED_ELSEWHERE = {
    # a kernelspec's launch options, checked with the launch's (core.launch_options)
    ("ClusterProvisioner", "size"),
    ("ClusterProvisioner", "gpu"),
}


class Knobs(Configurable):
    wait = Float(1.0, config=True)
    count = Int(1, config=True)
    _knob_waits = bounded(0, "wait", above=True, unit="seconds")
    _knob_counts = bounded(0, "count")


@pytest.mark.parametrize(
    ("setting", "value", "said"),
    [
        ("wait", 0.0, "Knobs.wait: give seconds, above 0; got 0.0"),
        ("wait", -2.5, "Knobs.wait: give seconds, above 0; got -2.5"),
        ("wait", float("nan"), "Knobs.wait: give seconds, above 0; got nan"),
        ("count", -1, "Knobs.count: give a number, 0 or more; got -1"),
    ],
)
def test_a_value_out_of_bounds_is_refused_naming_the_setting(
    setting: str, value: Any, said: str
) -> None:
    with pytest.raises(TraitError) as caught:
        Knobs(config=Config({"Knobs": {setting: value}}))
    assert str(caught.value) == said


def test_values_in_bounds_are_kept() -> None:
    knobs = Knobs(config=Config({"Knobs": {"wait": 0.01, "count": 0}}))
    assert (knobs.wait, knobs.count) == (0.01, 0)
    knobs.wait = float("inf")
    assert knobs.wait == float("inf")


def test_the_engine_refuses_a_spinning_interval_from_its_configuration(tmp_path: Any) -> None:
    config = Config({"ClusterManager": {"pending_poll_interval": 0}})
    with pytest.raises(TraitError, match=r"ClusterManager\.pending_poll_interval: give seconds"):
        ClusterManager(config=config, db_path=str(tmp_path / "c.db"))


def bounded_names(cls: type) -> set[str]:
    """The settings of ``cls`` some validator of its checks."""
    names: set[str] = set()
    for attribute in dir(cls):
        handler = getattr(cls, attribute, None)
        if isinstance(handler, ValidateHandler):
            names.update(handler.trait_names)
    return names


def unchecked_settings(
    kind: Callable[[str, Any], bool], elsewhere: set[tuple[str, str]]
) -> tuple[int, list[tuple[str, str]]]:
    """How many of the package's settings are of ``kind`` (given the name and the
    trait), and those of them no validator of their class checks, but ``elsewhere``."""
    unchecked = set()
    seen = 0
    for cls in configurables():
        checked = bounded_names(cls)
        for name, trait in cls.class_traits(config=True).items():
            if not kind(name, trait) or not ours(cls, name):
                continue
            seen += 1
            if name not in checked and (cls.__name__, name) not in elsewhere:
                unchecked.add((cls.__name__, name))
    return seen, sorted(unchecked)


def is_numeric(name: str, trait: Any) -> bool:
    return isinstance(trait, (Float, Int))


def test_every_numeric_setting_has_bounds() -> None:
    seen, unbounded = unchecked_settings(is_numeric, CHECKED_ELSEWHERE)
    assert seen > 40
    assert unbounded == []
