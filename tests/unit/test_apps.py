"""Declared web apps and proxied ports: what is accepted, and the message for what is not."""

from __future__ import annotations

import pytest

from jupyter_cluster.core.apps import apps_dict, parse_apps, parse_port
from jupyter_cluster.errors import InvalidRequest


@pytest.mark.parametrize(
    ("given", "port"), [("1", 1), ("6006", 6006), (65535, 65535), (" 80 ", 80)]
)
def test_ports_in_range_are_accepted(given: object, port: int) -> None:
    assert parse_port(given) == port


@pytest.mark.parametrize("given", ["0", "65536", "-1", "abc", "", "1.5", "\uff16", True, None, 3.0])
def test_other_ports_are_refused_naming_the_field(given: object) -> None:
    with pytest.raises(InvalidRequest) as refused:
        parse_port(given, "port")
    assert refused.value.field == "port"
    assert "1 to 65535" in refused.value.message


def test_apps_from_rest_and_cli_have_one_shape() -> None:
    from_rest = parse_apps({"tensorboard": 6006, "web": "8000"})
    from_cli = parse_apps(["tensorboard=6006", " web = 8000"])
    assert from_rest == from_cli == (("tensorboard", 6006), ("web", 8000))
    assert apps_dict(from_rest) == {"tensorboard": 6006, "web": 8000}
    assert parse_apps(None) == () == parse_apps([])


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ("tensorboard=6006", "NAME=PORT pairs"),
        (["tensorboard"], "not NAME=PORT"),
        (["bad name=1"], "not a valid app name"),
        (["tb=0"], "1 to 65535"),
        (["tb=1", "tb=2"], "declared twice"),
        (["a=1", "b=1"], "port 1 is declared twice"),
        ([f"a{i}=10{i:02d}" for i in range(17)], "at most 16"),
    ],
)
def test_wrong_declarations_say_what_to_write(given: object, says: str) -> None:
    with pytest.raises(InvalidRequest) as refused:
        parse_apps(given)
    assert refused.value.field == "apps"
    assert says in refused.value.message


def test_a_launch_keeps_its_apps_and_the_session_shows_them() -> None:
    from jupyter_cluster.core.models import LaunchSpec, Session

    spec = LaunchSpec.create(image="img", apps=["tensorboard=6006", "web=8000"])
    assert spec.apps == (("tensorboard", 6006), ("web", 8000))
    assert LaunchSpec.from_dict(spec.to_dict()) == spec
    assert LaunchSpec.from_dict({**spec.to_dict(), "apps": None}).apps == ()  # older records
    session = Session(id="s", spec=spec, containers=())
    assert session.to_dict()["apps"] == {"tensorboard": 6006, "web": 8000}
    from jupyter_cluster.cli.format import session_details

    assert "apps      tensorboard=6006, web=8000" in session_details(session).splitlines()
    with pytest.raises(InvalidRequest) as refused:
        LaunchSpec.create(image="img", apps=["tb=99999"])
    assert refused.value.field == "apps"


def test_rest_and_cli_take_apps() -> None:
    from jupyter_cluster.cli.launch_flags import launch_fields
    from jupyter_cluster.cli.parser import build_parser
    from jupyter_cluster.core.launch_options import validate
    from tests.unit.test_launch_options import POLICY

    fields, _ = validate({"apps": {"tensorboard": 6006}}, POLICY)
    assert fields["apps"] == {"tensorboard": 6006}
    assert validate({}, POLICY)[0]["apps"] is None
    for wrong in (["tensorboard=6006"], {"tb": "x"}, {"tb": 0}):
        with pytest.raises(InvalidRequest) as refused:
            validate({"apps": wrong}, POLICY)
        assert refused.value.field == "apps"
    args = build_parser().parse_args(["launch", "--app", "tb=6006", "--app", "web=8000"])
    assert launch_fields(args)["apps"] == ["tb=6006", "web=8000"]
    assert launch_fields(build_parser().parse_args(["launch"]))["apps"] is None
