"""Launch variables (``--env``, REST ``env``): what is refused, where they go, and that
their values are shown nowhere (messages, ``show``, the public session shape)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import pytest

from jupyter_cluster.cli.format import session_details
from jupyter_cluster.cli.launch_flags import launch_fields
from jupyter_cluster.cli.parser import build_parser
from jupyter_cluster.core import naming
from jupyter_cluster.core.launch_env import env_lines, parse_env
from jupyter_cluster.core.launch_options import validate
from jupyter_cluster.core.models import LaunchSpec, Session
from jupyter_cluster.core.naming import container_env, plan_containers
from jupyter_cluster.errors import InvalidRequest
from jupyter_cluster.provisioning.kernelspec import provisioner_config
from jupyter_cluster.provisioning.options import LaunchOptions
from jupyter_cluster.runtime.files import container_files
from tests.unit.test_launch_options import POLICY

SID = "0b5e8f3a-1d2c-4e5f-8a9b-0c1d2e3f4a5b"
SECRET = "s3cr3t-t0ken=with=equals"


def session(env: object) -> Session:
    spec = LaunchSpec.create(image="jupyter-cluster/kernel", size=2, env=env)
    return Session(id=SID, spec=spec, containers=plan_containers(SID, 2))


def refused(value: object, allowed: tuple[str, ...] = ()) -> str:
    with pytest.raises(InvalidRequest) as caught:
        parse_env(value, allowed)
    assert caught.value.field == "env"
    message = caught.value.message
    assert message.startswith("env: ")
    assert SECRET not in message and "t0ken" not in message
    return message


def test_mappings_and_key_value_texts_give_the_same_ordered_pairs() -> None:
    given = {"B_TOKEN": SECRET, "a1": "", "_X": " spaced "}
    assert parse_env(given) == (("B_TOKEN", SECRET), ("a1", ""), ("_X", " spaced "))
    texts = [f"B_TOKEN={SECRET}", "a1=", "_X= spaced "]
    assert parse_env(texts) == parse_env(given)
    assert parse_env(None) == parse_env([]) == parse_env({}) == ()
    assert env_lines("A=1\n\n  \nB=2\r\n") == ["A=1", "B=2"]


@pytest.mark.parametrize(
    "name",
    [
        *("PATH", "BACKENDAI_CLUSTER_HOST", "BACKENDAI_ANYTHING", "JC_HANDOFF"),
        *("JUPYTER_CLUSTER_X", "HOME", "USER", "PYTHONPATH", "GPU_COUNT", "TERM"),
    ],
)
def test_names_the_project_sets_are_refused_unless_the_site_allows_them(name: str) -> None:
    message = refused({name: SECRET})
    assert name in message and "jupyter-cluster itself" in message
    assert parse_env({name: SECRET}, allowed=(name,)) == ((name, SECRET),)


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ({"1A": SECRET}, "'1A' is not a variable name"),
        ({"A-B": SECRET}, "'A-B' is not a variable name"),
        ({"": SECRET}, "'' is not a variable name"),
        ({"A": 1}, "the value of A must be text"),
        ({"A": f"{SECRET}\nB=2"}, "the value of A holds a line break"),
        ({"A": f"{SECRET}\x00"}, "the value of A holds a line break or NUL"),
        ([f"A={SECRET}", f"A={SECRET}"], "A is given twice"),
        ([SECRET.replace("=", "")], "item 1 is not KEY=VALUE"),
        (["A=1", 7], "item 2 is not KEY=VALUE"),
        (SECRET, "give an object of names and values"),
        ({f"V{i}": "x" for i in range(101)}, "at most 100 variables"),
        ({"A": "x" * (64 * 1024)}, "characters in all"),
    ],
)
def test_bad_variables_are_refused_naming_env_but_never_quoting_a_value(
    value: object, says: str
) -> None:
    assert says in refused(value)


def test_every_container_gets_them_and_the_ssh_environment_file_too() -> None:
    s = session({"MY_TOKEN": SECRET})
    for container in s.containers:
        env = container_env(s, container)
        assert env["MY_TOKEN"] == SECRET
        assert env["BACKENDAI_CLUSTER_HOST"] == container.host  # still the project's
        keys = {"user": "k", "user.pub": "p", f"host:{container.host}": "h"}
        keys[f"host:{container.host}.pub"] = "hp"
        keys.update({f"host:{h}.pub": "hp" for h in s.hosts})
        files = {f.path: f for f in container_files(s, container, keys)}
        # the start-up script writes the container's environment there, for SSH
        link = files["/home/work/.ssh/environment"]
        assert link.link == naming.SSH_ENVIRONMENT
        ssh_env = files[naming.SSH_ENVIRONMENT]
        assert (ssh_env.mode, ssh_env.uid, ssh_env.content) == (0o600, naming.WORK_UID, b"")


def test_an_allowed_path_replaces_the_projects() -> None:
    spec = LaunchSpec.create(image="i", env={"PATH": "/opt/x/bin:/usr/bin"}, env_allowed=["PATH"])
    s = Session(id=SID, spec=spec, containers=plan_containers(SID, 1))
    assert container_env(s, s.containers[0])["PATH"] == "/opt/x/bin:/usr/bin"


def test_the_store_keeps_the_values_and_every_shown_shape_only_the_names() -> None:
    s = session({"MY_TOKEN": SECRET, "OTHER": "v"})
    record = s.to_record()
    assert Session.from_record(json.loads(json.dumps(record))) == s
    assert record["spec"]["env"] == {"MY_TOKEN": SECRET, "OTHER": "v"}
    public = s.to_dict()
    assert public["env"] == ["MY_TOKEN", "OTHER"]
    assert SECRET not in json.dumps(public)
    shown = session_details(s)
    assert "env       MY_TOKEN, OTHER" in shown and SECRET not in shown
    # A session read back from the shared service's REST reply has no values to use.
    assert Session.from_public(public).spec.env == ()


def test_rest_bodies_are_checked_with_the_sites_allowed_names() -> None:
    fields, _ = validate({"env": {"MY_TOKEN": SECRET}}, POLICY)
    assert fields["env"] == {"MY_TOKEN": SECRET}
    assert validate({}, POLICY)[0]["env"] is None
    for body in ({"env": {"PATH": "x"}}, {"env": ["A=1"]}, {"env": {"A": None}}):
        with pytest.raises(InvalidRequest) as caught:
            validate(body, POLICY)
        assert caught.value.field == "env"
    fields, _ = validate({"env": {"PATH": "x"}}, replace(POLICY, env_allowed=("PATH",)))
    assert fields["env"] == {"PATH": "x"}


def test_cli_flags_repeat_and_kernelspecs_carry_them() -> None:
    args = build_parser().parse_args(["launch", "--env", f"A={SECRET}", "--env", "B=2"])
    fields = launch_fields(args)
    assert fields["env"] == [f"A={SECRET}", "B=2"]
    spec = LaunchSpec.create(image="i", **{k: v for k, v in fields.items() if k != "image"})
    assert spec.env == (("A", SECRET), ("B", "2"))
    config = provisioner_config(spec, False, 300.0)
    options = LaunchOptions(**{k: v for k, v in config.items() if k != "launch_timeout"})
    again = LaunchSpec.create(image="i", **options.launch_fields())
    assert again.env == spec.env
    assert launch_fields(build_parser().parse_args(["launch"]))["env"] is None


def test_the_cli_refuses_a_reserved_name_with_a_clear_message_before_any_agent() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "jupyter_cluster.cli", "launch", "--env", f"PATH={SECRET}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "env: PATH is set by jupyter-cluster itself" in result.stderr
    assert SECRET not in result.stderr + result.stdout
    result = subprocess.run(
        [sys.executable, "-m", "jupyter_cluster.cli", "launch", "--env", SECRET.replace("=", "")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and "env: item 1 is not KEY=VALUE" in result.stderr
    assert "t0ken" not in result.stderr


def test_the_notebook_form_sends_its_lines_as_variables() -> None:
    from jupyter_cluster.core.launch_form import describe
    from jupyter_cluster.widgets import LaunchForm

    form = LaunchForm(schema=describe(POLICY), agents=[], ask_engine=False)
    assert form.values()["env"] is None
    form.env.value = f"MY_TOKEN={SECRET}\n\nB=2\n"
    assert form.values()["env"] == [f"MY_TOKEN={SECRET}", "B=2"]
    spec = LaunchSpec.create(**form.values())
    assert spec.env == (("MY_TOKEN", SECRET), ("B", "2"))
    form.env.value = "PATH=/x"
    with pytest.raises(InvalidRequest, match="env: PATH is set by jupyter-cluster itself"):
        LaunchSpec.create(**form.values())
