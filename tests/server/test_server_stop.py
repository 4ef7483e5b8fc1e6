"""A server that stops takes its cluster kernels' sessions along, as it takes local kernels.

A real ``jupyter server`` process, stopped with SIGTERM: a kernel started through
``/api/kernels`` that runs, and one still waiting for room (its session PENDING),
both end with the server; no session is left PENDING or RUNNING and nothing is
left on Docker (the ``workspace`` fixture fails the test on any leftover).

Both of jupyter_server's kernel managers are exercised for running kernels: the
asynchronous one (the default) and the synchronous ``MappingKernelManager``, which
starts kernels on one runner loop and shuts them down at server stop from another.
A kernel waiting for room is exercised with the asynchronous one only: the
synchronous one blocks the whole server while any kernel starts (a local kernel's
too), so that server cannot even take the signal until the start ends.
"""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path
from typing import Any

import pytest

from jupyter_cluster.engine.store.sessions import Store
from tests.support.constants import SMALL_BODY
from tests.support.waiting import eventually

from .support import jp_async, server

pytestmark = pytest.mark.docker

KERNEL_MANAGERS = {
    "async": "jupyter_server.services.kernels.kernelmanager.AsyncMappingKernelManager",
    "sync": "jupyter_server.services.kernels.kernelmanager.MappingKernelManager",
}


def use_kernel_manager(jp_config_dir: Path, manager: str) -> None:
    """Have the next server use the kernel manager named ``manager``."""
    config = {"ServerApp": {"kernel_manager_class": KERNEL_MANAGERS[manager]}}
    (jp_config_dir / "jupyter_server_config.json").write_text(json.dumps(config))


def ended_statuses(jp_data_dir: Path) -> set[str]:
    """The statuses of every session the server's store has seen."""
    store = Store(jp_data_dir / "cluster" / "cluster.db")
    try:
        return {s.status.value for s in store.list(include_ended=True)}
    finally:
        store.close()


@pytest.fixture
def workspace_config(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Room for one kernel's session: the second one waits PENDING. A test may add
    launch options (``indirect`` parameters)."""
    options = {**SMALL_BODY, **getattr(request, "param", {})}
    return {
        "ClusterApp": {"default_launch_options": options, "events_poll_interval": 0.2},
        "ClusterManager": {"agents": [{"id": "local", "cpu": SMALL_BODY["cpu"]}]},
    }


@pytest.mark.parametrize("manager", sorted(KERNEL_MANAGERS))
@jp_async
async def test_stopping_the_server_ends_its_running_kernels_sessions(
    workspace: Path, jp_config_dir: Path, jp_data_dir: Path, manager: str
) -> None:
    use_kernel_manager(jp_config_dir, manager)
    kernel = {"name": "jupyter-cluster-session"}
    async with server(workspace) as running:
        code, first = await running.call("POST", "api/kernels", kernel)
        assert code == 201, first
        code, shut = await running.call("DELETE", f"api/kernels/{first['id']}")
        assert code == 204, shut
        code, second = await running.call("POST", "api/kernels", kernel)
        assert code == 201, second
        code, listed = await running.call("GET", "cluster/api/sessions")
        assert code == 200, listed
        assert [s["status"] for s in listed].count("RUNNING") == 1, listed
        await running.stop(signal.SIGTERM)
        assert running.proc is not None and running.proc.returncode == 0
    log = next(workspace.glob("server-*.log")).read_text()
    assert "attached to a different loop" not in log, log[-3000:]
    assert ended_statuses(jp_data_dir) == {"TERMINATED"}


@jp_async
async def test_stopping_the_server_ends_running_and_waiting_kernel_sessions(
    workspace: Path, jp_config_dir: Path, jp_data_dir: Path
) -> None:
    use_kernel_manager(jp_config_dir, "async")
    kernel = {"name": "jupyter-cluster-session"}
    async with server(workspace) as running:
        code, first = await running.call("POST", "api/kernels", kernel)
        assert code == 201, first
        waiting = asyncio.ensure_future(running.call("POST", "api/kernels", kernel))

        async def one_waits() -> bool:
            code, listed = await running.call("GET", "cluster/api/sessions")
            return code == 200 and sorted(s["status"] for s in listed) == ["PENDING", "RUNNING"]

        await eventually(one_waits, 60, "a running and a waiting kernel session")
        await running.stop(signal.SIGTERM)
        assert running.proc is not None and running.proc.returncode == 0
        await asyncio.gather(waiting, return_exceptions=True)

    ended = ended_statuses(jp_data_dir)
    assert ended <= {"TERMINATED", "CANCELLED"} and len(ended) >= 1, ended


@pytest.mark.parametrize("workspace_config", [{"bootstrap": "sleep 600"}], indirect=True)
@jp_async
async def test_stopping_the_server_while_a_kernel_session_is_prepared_ends_it(
    workspace: Path, jp_config_dir: Path, jp_data_dir: Path
) -> None:
    use_kernel_manager(jp_config_dir, "async")
    async with server(workspace) as running:
        kernel = {"name": "jupyter-cluster-session"}
        starting = asyncio.ensure_future(running.call("POST", "api/kernels", kernel))

        async def bootstrapping() -> bool:
            code, listed = await running.call("GET", "cluster/api/sessions")
            return code == 200 and [s["status"] for s in listed] == ["PREPARING"]

        await eventually(bootstrapping, 60, "the kernel's session to run its bootstrap")
        await running.stop(signal.SIGTERM)
        assert running.proc is not None and running.proc.returncode == 0
        await asyncio.gather(starting, return_exceptions=True)
    ended = ended_statuses(jp_data_dir)
    assert ended and ended <= {"TERMINATED", "CANCELLED"}, ended
