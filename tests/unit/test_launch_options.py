"""The launch form and request checks, without a server: any JSON either validates into
arguments the engine accepts or is refused with InvalidRequest naming a field.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from jupyter_cluster.core.launch_form import describe
from jupyter_cluster.core.launch_options import FIELDS, LaunchPolicy, validate
from jupyter_cluster.core.models import LaunchSpec
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
    max_sessions_per_user=3,
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=5,
)
fields = st.sampled_from([*FIELDS, "other"])


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(fields, json_values, max_size=5) | json_values)
@example({"retries": float("inf")})  # int(inf) raised OverflowError: a 500, not a 400
def test_any_json_is_accepted_or_refused_with_a_field(body: Any) -> None:
    try:
        arguments, start_kernel = validate(body, POLICY)
    except InvalidRequest as exc:
        assert exc.field is not None, exc
        assert exc.message.startswith(f"{exc.field or '(no name)'}:"), exc.message
        return
    spec = LaunchSpec.create(max_size=POLICY.max_size, **arguments)
    assert isinstance(start_kernel, bool)
    assert 1 <= spec.size <= POLICY.max_size
    assert spec.resources.cpu <= POLICY.max_cpu and spec.resources.mem <= POLICY.max_mem


@pytest.mark.parametrize("field", ["size", "gpu", "priority", "retries"])
@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan"), 1.5, True, [1]])
def test_a_whole_number_field_refuses_what_is_not_one(field: str, value: Any) -> None:
    body = {"command": "true"} if field == "retries" else {}
    with pytest.raises(InvalidRequest) as refused:
        validate({**body, field: value}, POLICY)
    assert refused.value.field == field, refused.value.message


def test_defaults_are_clamped_to_the_limits_and_described() -> None:
    small = LaunchPolicy(
        images=("img",),
        max_size=2,
        max_cpu=0.5,
        max_mem=512 * MIB,
        max_shm=32 * MIB,
        max_gpu=0,
        resource_groups=("g",),
    )
    arguments, start_kernel = validate({}, small)
    assert arguments["cpu"] == 0.5 and arguments["mem"] == 512 * MIB
    assert arguments["shm"] == 32 * MIB and arguments["resource_group"] == "g"
    assert start_kernel is False
    form = describe(small)
    assert form["defaults"]["image"] == "img" and form["defaults"]["mem"] == "512m"


def test_an_image_name_docker_would_refuse_is_refused_saying_why() -> None:
    # Even where the site allows it: an allowed list may hold a name with a typo.
    policy = replace(POLICY, images=("Team/Kernel:1",))
    with pytest.raises(InvalidRequest) as refused:
        validate({"image": "Team/Kernel:1"}, policy)
    assert refused.value.field == "image"
    assert "image names are lower case" in refused.value.message
    with pytest.raises(InvalidRequest, match="is no image reference: '' after ':' is no tag"):
        LaunchSpec.create(image="jupyter-cluster/kernel:")
