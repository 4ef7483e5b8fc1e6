"""Every route requires the server's authentication and authorization.

A static check (every HTTP method of every cluster handler carries
``@web.authenticated`` and ``@authorized``) and live checks against the server:
no token → 403, an authorizer that refuses → 403, for every route and method in
the OpenAPI document. Nothing is created by a refused request.
"""

from __future__ import annotations

import ast
import inspect
import json
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from jupyter_server.auth import Authorizer

import jupyter_cluster
from jupyter_cluster.server.handlers import default_handlers
from jupyter_cluster.server.handlers.base import AUTH_RESOURCE, ClusterHandler
from jupyter_cluster.server.handlers.proxy import AppProxyHandler, proxy_handlers
from tests.support.docker import manager_objects
from tests.support.sources import parse_files

from .support import call, jp_async

pytestmark = pytest.mark.docker
HTTP_METHODS = {"get", "post", "put", "patch", "delete", "head"}
PACKAGE = Path(jupyter_cluster.__file__).parent
#: The handlers' modules, parsed at collection (see tests.support.sources).
HANDLER_TREES = parse_files(
    {Path(inspect.getsourcefile(h) or "") for _, h in (*default_handlers, ("", AppProxyHandler))}
)


def _decorators(node: ast.AsyncFunctionDef | ast.FunctionDef) -> list[str]:
    names = []
    for dec in node.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        names.append(ast.unparse(target))
    return names


def checked_methods() -> dict[str, set[str]]:
    """Class name → HTTP methods that carry both decorators (authenticated outermost)."""
    found: dict[str, set[str]] = {}
    files = {inspect.getsourcefile(handler) for _, handler in default_handlers}
    assert files, "no handler modules found"
    for path in sorted(Path(f) for f in files if f):
        for cls in ast.walk(HANDLER_TREES[path]):
            if not isinstance(cls, ast.ClassDef):
                continue
            for node in cls.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                    node.name in HTTP_METHODS
                ):
                    names = _decorators(node)
                    assert names[:2] == ["web.authenticated", "authorized"], (
                        f"{path.name}: {cls.name}.{node.name} must be decorated with "
                        f"@web.authenticated then @authorized, has {names}"
                    )
                    found.setdefault(cls.name, set()).add(node.name)
    return found


def test_every_handler_method_is_authenticated_and_authorized() -> None:
    checked = checked_methods()
    assert default_handlers, "no routes"
    for pattern, handler in default_handlers:
        assert pattern.startswith("cluster/api/"), pattern
        assert issubclass(handler, ClusterHandler), handler
        assert handler.auth_resource == AUTH_RESOURCE
        methods = {
            name
            for klass in handler.__mro__
            if issubclass(klass, ClusterHandler)
            for name in vars(klass)
            if name in HTTP_METHODS
        }
        assert methods, f"{handler.__name__} serves nothing"
        unchecked = methods - checked.get(handler.__name__, set())
        assert not unchecked, f"{handler.__name__}.{unchecked} lack the auth decorators"


def routes() -> list[tuple[str, str]]:
    """(method, path) of every operation in the OpenAPI document, with sample ids."""
    document = json.loads(files("jupyter_cluster.server").joinpath("openapi.json").read_text())
    result = []
    for path, item in document["paths"].items():
        concrete = path.replace("{ref}", "nosuch").replace("{host}", "main1").lstrip("/")
        result += [(m.upper(), concrete) for m in item if m in HTTP_METHODS]
    return result


def test_the_openapi_document_lists_every_route() -> None:
    documented = {path for _, path in routes()}
    assert len(documented) == len(default_handlers)


def test_the_app_proxy_is_authenticated_and_authorized() -> None:
    """The app proxy (not a REST route: its pages are the apps') is held to the same
    rule: every HTTP method it serves carries both decorators."""
    path = Path(inspect.getsourcefile(AppProxyHandler) or "")
    [cls] = [
        node
        for node in ast.walk(HANDLER_TREES[path])
        if isinstance(node, ast.ClassDef) and node.name == "AppProxyHandler"
    ]
    served = set()
    for node in cls.body:
        if isinstance(node, ast.AsyncFunctionDef) and node.name in HTTP_METHODS | {"options"}:
            assert _decorators(node)[:2] == ["web.authenticated", "authorized"], node.name
            served.add(node.name)
    assert served == HTTP_METHODS | {"options"}
    assert {handler for _, handler, _ in proxy_handlers} == {AppProxyHandler}
    assert AppProxyHandler.auth_resource == AUTH_RESOURCE


BODIES = {"POST": json.dumps({"size": 1})}


@jp_async
async def test_requests_without_a_valid_token_are_refused(jp_fetch: Any, cluster: Any) -> None:
    for headers in ({"Authorization": "token wrong"}, {"Authorization": ""}):
        for method, path in routes():
            response = await jp_fetch(
                "cluster",
                "api",
                *path.split("/"),
                method=method,
                body=BODIES.get(method),
                headers=dict(headers),
                raise_error=False,
                allow_nonstandard_methods=True,
            )
            assert response.code in (401, 403), (method, path, response.code)
    assert cluster.engine.store.list(include_ended=True) == []
    assert manager_objects(cluster.engine.store.manager_id) == ([], [])


class RefuseCluster(Authorizer):
    """Allows everything but the ``cluster`` resource; records what it was asked."""

    asked: list[tuple[str, str]] = []

    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        RefuseCluster.asked.append((action, resource))
        return resource != AUTH_RESOURCE


@pytest.fixture
def cluster_config() -> dict[str, Any]:
    return {"ServerApp": {"authorizer_class": RefuseCluster}}


@jp_async
async def test_an_authorizer_that_refuses_gives_403(jp_fetch: Any, cluster: Any) -> None:
    RefuseCluster.asked = []
    for method, path in routes():
        code, data, _ = await call(
            jp_fetch, *path.split("/"), method=method, body=BODIES.get(method)
        )
        assert code == 403, (method, path, code, data)
    for form in ("proxy", "proxy-absolute"):
        code, data, _ = await call(jp_fetch, form, "nosuch", "8000", "", base=("cluster",))
        assert code == 403, (form, code, data)
    expected_actions = {"read" if m == "GET" else "write" for m, _ in routes()}
    assert {a for a, r in RefuseCluster.asked if r == AUTH_RESOURCE} == expected_actions
    assert cluster.engine.store.list(include_ended=True) == []
