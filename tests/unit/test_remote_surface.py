"""Both engines implement the Engine protocol, and team mode's client's pure parts behave.

:class:`~jupyter_cluster.client.remote_engine.RemoteEngine` stands in for a
:class:`~jupyter_cluster.engine.manager.ClusterManager` in every front end when a
shared service is configured. mypy checks both against
:class:`~jupyter_cluster.engine.api.Engine` where ``make_engine`` returns them; these
tests also fail when either drifts from the protocol at run time (a method is
missing, or takes other arguments), or when a front end could ask which it has.
The client's behaviour against a real service is shown by ``tests/hub``.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import httpx
import pytest
from traitlets.config import Config

from jupyter_cluster.client.admission import RemoteLaunch
from jupyter_cluster.client.http import raise_for
from jupyter_cluster.client.remote_engine import RemoteEngine
from jupyter_cluster.client.shell import command_line
from jupyter_cluster.config import LaunchSettings, service_client
from jupyter_cluster.core.access import Access, public_material
from jupyter_cluster.core.models import LaunchSpec, Session
from jupyter_cluster.core.naming import plan_containers
from jupyter_cluster.engine.api import Engine
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.errors import AgentError, ClusterError, Conflict, InvalidRequest, NotFound
from jupyter_cluster.reach.ssh import SshRoute

#: What the CLI, the notebook API, the provisioner and the server extension call:
#: every method of the Engine protocol they are typed against.
FRONT_END_SURFACE = sorted(
    name for name, value in vars(Engine).items() if inspect.isfunction(value) and name[0] != "_"
)


def test_the_surface_is_the_whole_protocol() -> None:
    assert {"submit", "drive", "terminate", "logs", "main_route", "launch_gate"} <= set(
        FRONT_END_SURFACE
    )
    assert len(FRONT_END_SURFACE) == 43  # the 22 of old, 8 that hide what differs, page,
    # 3 of launch profiles, 6 of the files in data folders, a data folder's rename, the
    # audit record of what a front end without a server did, and a launch's dry run


@pytest.mark.parametrize("name", FRONT_END_SURFACE)
@pytest.mark.parametrize("engine", [ClusterManager, RemoteEngine])
def test_each_engine_takes_what_the_protocol_takes(engine: type, name: str) -> None:
    declared = getattr(Engine, name)
    given = getattr(engine, name)
    assert inspect.iscoroutinefunction(declared) == inspect.iscoroutinefunction(given), name
    if not inspect.iscoroutinefunction(declared):  # logs: an async generator in both
        assert inspect.isasyncgenfunction(given) == (name == "logs"), name
    wanted, got = inspect.signature(declared), inspect.signature(given)
    for param in wanted.parameters.values():
        if param.kind in (param.VAR_KEYWORD, param.VAR_POSITIONAL):
            assert any(p.kind == param.kind for p in got.parameters.values()), name
            continue
        assert param.name in got.parameters, f"{engine.__name__}.{name}() lacks {param.name}"
        assert got.parameters[param.name].kind == param.kind, f"{name}({param.name})"
        if param.default is not param.empty:
            assert got.parameters[param.name].default == param.default, f"{name}({param.name})"
    for param in got.parameters.values():  # nothing the front ends can't pass
        if param.name not in wanted.parameters and param.kind not in (
            param.VAR_KEYWORD,
            param.VAR_POSITIONAL,
        ):
            assert param.default is not param.empty, f"{name}({param.name}) has no default"


def test_front_ends_never_ask_which_engine_they_have() -> None:
    """No ``remote`` flag is left to branch on: what differs is behind the protocol."""
    assert not hasattr(ClusterManager, "remote") and not hasattr(RemoteEngine, "remote")
    package = Path(inspect.getfile(Engine)).parents[1]
    asking = [
        f"{path.relative_to(package)}:{n}"
        for path in package.rglob("*.py")
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"\.remote\b", line)
    ]
    assert asking == []


def test_the_client_routes_and_gates_its_own_way() -> None:
    remote = RemoteEngine("http://h/", "t")
    route = remote.main_route()
    assert isinstance(route, SshRoute) and not route.starts_early and route.transport == "ssh"
    gate = remote.launch_gate(LaunchSettings())
    admitted = gate.admit({"size": 2, "start_kernel": True}, "alice")
    assert admitted.spec == RemoteLaunch({"size": 2}) and admitted.start_kernel
    assert admitted.quota is None and gate.quota("alice") is None and gate.default_spec() is None
    assert (gate.groups(), gate.images()) == ((), ())
    assert remote.upkeep(lambda: None) == [] and remote.mark_ending("x") is False
    assert remote.phase_missing("x", "kernel_ready") is None
    with pytest.raises(InvalidRequest) as caught:
        gate.admit({"start_kernel": "yes"}, "alice")
    assert caught.value.field == "start_kernel"


def test_a_service_url_makes_the_client(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JUPYTER_CLUSTER_SERVICE_URL", raising=False)
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "from-env")
    assert service_client(Config()) is None
    remote = service_client(Config({"ClusterManager": {"service_url": "http://h:1/s/"}}))
    assert remote is not None and remote.http.base == "http://h:1/s/cluster/api/"
    assert remote.http.headers == {"Authorization": "token from-env"}
    monkeypatch.setenv("JUPYTER_CLUSTER_SERVICE_URL", "http://e:2/")
    remote = service_client(Config({"ClusterManager": {"service_token": "given"}}))
    assert remote is not None and remote.http.base == "http://e:2/cluster/api/"
    assert remote.http.headers == {"Authorization": "token given"}


def test_a_launch_is_checked_here_and_sent_as_given() -> None:
    remote = RemoteEngine("http://h/", "t")
    launch = remote.make_spec(size="2", cpu="0.5", mem="512m", mounts=["data:ro"], image=None)
    assert isinstance(launch, RemoteLaunch)
    # no image given: the service's default applies, not this process's
    # given fields in the REST API's types; the rest are the service's defaults
    assert launch.body == {"size": 2, "cpu": 0.5, "mem": 512 * 2**20, "mounts": ["data:ro"]}
    with pytest.raises(InvalidRequest) as caught:
        remote.make_spec(cpu="lots")
    assert caught.value.field == "cpu"
    for wrong in ("sizes", "max_size"):  # a typo, and the service's own limit
        with pytest.raises(InvalidRequest, match=f"^{wrong}: unknown launch field"):
            remote.make_spec(**{wrong: 2})


def test_a_session_survives_the_trip_through_rest() -> None:
    spec = LaunchSpec.create(image="img", size=3, cpu=0.5, mem="1g", name="train", bootstrap="x")
    session = Session(
        "4f0e0d8a-1111-4222-8333-944455556666",
        spec,
        containers=tuple(plan_containers("4f0e0d8a-1111-4222-8333-944455556666", 3)),
        owner="alice",
        kernel_id="k",
    )
    assert Session.from_public(session.to_dict()) == session
    unnamed = session.with_(spec=LaunchSpec.create(image="img"))
    assert Session.from_public(unnamed.to_dict()).spec.name is None


def test_the_owner_gets_no_private_host_key() -> None:
    material = {"user": "U", "user.pub": "u", "host:main1": "SECRET", "host:main1.pub": "m"}
    assert public_material(material) == {"user": "U", "user.pub": "u", "host:main1.pub": "m"}
    access = Access.from_dict({"address": "a", "port": "22", "keys": material})
    assert access.port == 22 and "host:main1" not in access.keys


@pytest.mark.parametrize(
    ("status", "body", "error"),
    [
        (400, {"message": "cpu: too much", "field": "cpu"}, InvalidRequest),
        (404, {"message": "no session"}, NotFound),
        (409, {"message": "over the limit"}, Conflict),
        (502, {"message": "docker down"}, AgentError),
        (500, "<html>oops</html>", AgentError),
    ],
)
def test_replies_become_the_errors_the_service_raised(
    status: int, body: object, error: type[ClusterError]
) -> None:
    reply = (
        httpx.Response(status, json=body)
        if isinstance(body, dict)
        else httpx.Response(status, text=str(body))
    )
    with pytest.raises(error) as caught:
        raise_for(reply, "http://svc/")
    if isinstance(body, dict):
        assert body["message"] in str(caught.value)
        assert getattr(caught.value, "field", None) == body.get("field")


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_token_says_what_to_check(status: int) -> None:
    with pytest.raises(ClusterError) as caught:
        raise_for(httpx.Response(status, json={"message": "Forbidden"}), "http://svc/")
    assert not isinstance(caught.value, AgentError | InvalidRequest)
    assert "access:services!service=cluster" in str(caught.value)
    raise_for(httpx.Response(204), "http://svc/")  # success raises nothing


def test_commands_over_ssh_are_quoted_for_the_shell() -> None:
    line = command_line(["/bin/sh", "-c", "echo $HOME; rm -rf /"], {"A": "x y", "B": "'q'"})
    # the variables come on stdin (test_ssh_command_line); the argv is quoted whole
    assert line.endswith(" /bin/sh -c 'echo $HOME; rm -rf /'"), line
    assert "x y" not in line and "'q'" not in line
    assert command_line(["hostname"]) == "hostname"


async def test_the_remote_engine_leaves_removing_containers_to_the_service() -> None:
    """``remove_subs`` (a script's kernel asked to end) asks the service nothing: its
    terminate removes every container; a request here would fail (no such host)."""
    remote = RemoteEngine("http://no-such-host.invalid/", "t")
    try:
        assert await remote.remove_subs("x") is None
    finally:
        await remote.close()
