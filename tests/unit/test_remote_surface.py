"""Team mode's client keeps the engine's front-end surface, and its pure parts behave.

:class:`~jupyter_cluster.client.remote.RemoteEngine` stands in for a
:class:`~jupyter_cluster.engine.manager.ClusterManager` in every front end when a
shared service is configured; these tests fail when the two drift apart (a method
front ends call is missing, or takes other arguments). The client's behaviour
against a real service is shown by ``tests/hub``.
"""

from __future__ import annotations

import inspect

import httpx
import pytest
from traitlets.config import Config

from jupyter_cluster.client.http import raise_for
from jupyter_cluster.client.remote import RemoteEngine, RemoteLaunch
from jupyter_cluster.client.shell import command_line
from jupyter_cluster.config import service_client
from jupyter_cluster.core.access import Access, public_material
from jupyter_cluster.core.models import LaunchSpec, Session
from jupyter_cluster.core.naming import plan_containers
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.errors import AgentError, ClusterError, Conflict, InvalidRequest, NotFound

#: What the CLI, the notebook API, the provisioner and the server extension call.
FRONT_END_SURFACE = (
    "start",
    "refresh",
    "close",
    "make_spec",
    "quota",
    "submit",
    "drive",
    "launch",
    "get",
    "list",
    "check_logs",
    "stats",
    "logs",
    "exec",
    "terminate",
    "agents_info",
    "resource_groups_info",
    "images_info",
    "access",
    "list_folders",
    "create_folder",
    "remove_folder",
)


@pytest.mark.parametrize("name", FRONT_END_SURFACE)
def test_the_remote_engine_takes_what_the_engine_takes(name: str) -> None:
    local = inspect.signature(getattr(ClusterManager, name))
    remote = inspect.signature(getattr(RemoteEngine, name))
    assert inspect.iscoroutinefunction(getattr(ClusterManager, name)) == (
        inspect.iscoroutinefunction(getattr(RemoteEngine, name))
    ), name
    assert inspect.isasyncgenfunction(getattr(ClusterManager, name)) == (
        inspect.isasyncgenfunction(getattr(RemoteEngine, name))
    ), name
    for param in local.parameters.values():
        if param.kind in (param.VAR_KEYWORD, param.VAR_POSITIONAL):
            assert any(p.kind == param.kind for p in remote.parameters.values()), name
            continue
        assert param.name in remote.parameters, f"{name}() lacks {param.name}"
        assert remote.parameters[param.name].kind == param.kind, f"{name}({param.name})"
    for param in remote.parameters.values():  # nothing the engine's callers can't pass
        if param.name not in local.parameters and param.kind not in (
            param.VAR_KEYWORD,
            param.VAR_POSITIONAL,
        ):
            assert param.default is not param.empty, f"{name}({param.name}) has no default"
    assert ClusterManager.remote is False and RemoteEngine.remote is True


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
    assert line == "env 'A=x y' 'B='\"'\"'q'\"'\"'' /bin/sh -c 'echo $HOME; rm -rf /'"
    assert command_line(["hostname"]) == "hostname"
