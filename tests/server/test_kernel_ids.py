"""A kernel id chosen by the client: the cluster kernel takes any id a local kernel takes.

jupyter_server accepts the ``kernel_id`` of ``POST /api/kernels`` as given (it need
not be a UUID). A local ipykernel and a cluster kernel are started side by side
with such ids: the same status codes, code runs in both, and the cluster kernel's
session ends with nothing left when the kernel is deleted.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.docker import running_hosts

from .support import jp_async, kernel_execute, ok_http, wait_status

pytestmark = pytest.mark.docker


async def start(fetch: Any, name: str, kernel_id: str) -> tuple[int, dict[str, Any]]:
    body = json.dumps({"name": name, "kernel_id": kernel_id})
    reply = await fetch("api", "kernels", method="POST", body=body)
    return reply.code, json.loads(reply.body)


@jp_async
async def test_a_client_chosen_id_that_is_not_a_uuid_works_as_with_a_local_kernel(
    jp_fetch: Any, jp_ws_fetch: Any, cluster: Any
) -> None:
    # Not UUIDs, yet of the shape jupyter_server's kernel routes match.
    ids = {"python3": "notebook-one-run-2-local", "jupyter-cluster-session": "my-k-x-y-cluster"}
    for name, kernel_id in ids.items():
        code, model = await start(jp_fetch, name, kernel_id)
        assert (code, model["id"], model["name"]) == (201, kernel_id, name)
        ws = await jp_ws_fetch("api", "kernels", kernel_id, "channels")
        try:
            assert (await kernel_execute(ws, "print(6 * 7)")).strip() == "42"
        finally:
            ws.close()
    [session] = await ok_http(jp_fetch, "sessions")
    for kernel_id in ids.values():
        reply = await jp_fetch("api", "kernels", kernel_id, method="DELETE")
        assert reply.code == 204
    await wait_status(jp_fetch, session["id"], "TERMINATED")
    assert running_hosts(session["id"]) == {}
