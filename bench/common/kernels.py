"""Cluster kernels and ours' side of a launch: kernelspecs, kernel managers, clients,
one cell's round trip, and ours' launch, terminate and concurrent launches.

Ours always goes through the project's public paths, as a user's front end would:
a cluster kernelspec started with ``AsyncKernelManager``, or
:class:`~jupyter_cluster.engine.manager.ClusterManager`. Kernelspecs are installed
under the run's private prefix (``<root>/prefix``, see
:func:`common.sandbox.jupyter_dirs`). Used by ``bench_kernel_start.py``,
``bench_launch.py``, ``bench_warm.py``, ``bench_multiagent.py``, ``bench_io.py``
and ``bench_gateway.py``, and by :mod:`common.floors` (:func:`client_of`);
:func:`one_size_options` by the diagnostics of one launch size
(``bench_launch_cpu.py``, ``bench_launch_timeline.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any

from common.constants import IMAGE, MANAGER_LABEL
from common.harness import Timer
from common.sandbox import add_run_id


def one_size_options(description: str, argv: list[str] | None) -> argparse.Namespace:
    """The options of a diagnostic that alternates ours' and the floor's launch of one
    size: ``--size``, ``--repeat`` (runs of each side), ``--mem``, ``--image``,
    ``--timeout`` and ``--run-id``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--size", type=int, default=16, help="containers per launch")
    parser.add_argument("--repeat", type=int, default=4, help="runs of each side")
    parser.add_argument("--mem", default="256m", help="memory per container (both sides)")
    parser.add_argument("--image", default=IMAGE)
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds per start")
    add_run_id(parser)
    return parser.parse_args(argv)


def cluster_config(transport: str | None = None) -> Any:
    """Kernel manager configuration: the local engine as an agent with room for every
    size (the scheduler's bookkeeping would otherwise stop at the number of cores),
    with ``kernel_transport`` ``transport`` if given."""
    from traitlets.config import Config

    agent: dict[str, Any] = {"id": "local", "cpu": 1024}
    if transport is not None:
        agent["kernel_transport"] = transport
    return Config({"ClusterManager": {"agents": [agent]}})


def install_kernelspec(
    root: str, timeout: float, name: str = "", display: str = "", **spec: Any
) -> str:
    """The cluster kernelspec of ``LaunchSpec.create(**spec)`` (image, size, cpu, mem,
    mode, …) under the run's private prefix, named ``name`` (default ``bench-<size>``)
    and shown as ``display`` (default ``bench <size>``); its name."""
    from jupyter_cluster.core.models import LaunchSpec
    from jupyter_cluster.provisioning import kernelspec

    name = name or f"bench-{spec['size']}"
    config = kernelspec.provisioner_config(LaunchSpec.create(**spec), True, timeout)
    prefix = os.path.join(root, "prefix")
    kernelspec.install(name, display or f"bench {spec['size']}", config, prefix=prefix)
    return name


def client_of(connection: dict[str, Any]) -> Any:
    """A started AsyncKernelClient on ``connection`` (no heartbeat: with no kernel
    manager it would call a kernel that is still importing dead)."""
    from jupyter_client.asynchronous import AsyncKernelClient

    client = AsyncKernelClient()
    info: Any = connection  # jupyter_client wants its KernelConnectionInfo TypedDict
    client.load_connection_info(info)
    client.start_channels(hb=False)
    return client


async def start_client(km: Any, timeout: float) -> Any:
    """Start ``km``'s kernel; its client once the kernel answered ``kernel_info``.
    On any failure the kernel is shut down (``now``) before the error goes on."""
    client = None
    try:
        await km.start_kernel()
        client = km.client()
        client.start_channels()
        await client.wait_for_ready(timeout=timeout)
    except BaseException:
        if client is not None:
            client.stop_channels()
        if km.has_kernel:
            await km.shutdown_kernel(now=True)
        raise
    return client


async def start_kernel(kernel_name: str, config: Any = None, timeout: float = 120) -> Any:
    """An ``AsyncKernelManager`` of ``kernel_name`` started, and its ready client."""
    from jupyter_client.manager import AsyncKernelManager

    km = AsyncKernelManager(kernel_name=kernel_name, **({"config": config} if config else {}))
    return km, await start_client(km, timeout)


async def stop_kernel(km: Any, client: Any) -> None:
    """Stop the client's channels and shut the kernel down (its session too)."""
    client.stop_channels()
    if km.has_kernel:
        await km.shutdown_kernel(now=True)


async def round_trip(client: Any, timeout: float = 30) -> float:
    """Seconds of one empty cell: execute_request ``pass`` → execute_reply and idle."""
    with Timer() as timer:
        msg_id = client.execute("pass", store_history=False)
        while True:
            reply = await client.get_shell_msg(timeout=timeout)
            if reply["parent_header"].get("msg_id") == msg_id:
                break
        while True:
            msg = await client.get_iopub_msg(timeout=timeout)
            if (
                msg["parent_header"].get("msg_id") == msg_id
                and msg["msg_type"] == "status"
                and msg["content"]["execution_state"] == "idle"
            ):
                break
    return timer.seconds


# -- ours ----------------------------------------------------------------------------


async def placement_of(manager: Any, session_id: str) -> dict[str, str]:
    """host -> agent id of a session's containers."""
    session = await manager.get(session_id)
    return {c.host: c.agent or "" for c in session.containers}


async def ours_launch(
    kernel: str,
    size: int,
    timeout: float,
    shutdowns: list[float],
    config: Any = None,
    placement: dict[str, str] | None = None,
    on_ready: Callable[[], None] | None = None,
) -> float:
    """Seconds from ``start_kernel()`` of the cluster kernelspec ``kernel`` of ``size``
    containers (it returns at RUNNING: every sshd listens) until the kernel answers
    ``kernel_info`` and (size > 1; size 1 has no sub) ``ssh sub<size-1> true`` run in
    main1 (``ClusterManager.exec``: docker exec) exits 0; then ``shutdown_kernel()``,
    its seconds into ``shutdowns``. ``config``: the kernel manager's (default
    :func:`cluster_config`); ``placement``, if given, gets the session's host -> agent
    id (read after the timing, before the shutdown); ``on_ready``, if given, is called
    right after the timing."""
    from jupyter_client.manager import AsyncKernelManager

    km = AsyncKernelManager(kernel_name=kernel, config=config or cluster_config())
    client = None
    start = time.monotonic()
    try:
        await km.start_kernel()
        client = km.client()
        client.start_channels()
        provisioner: Any = km.provisioner
        last = f"sub{size - 1}"

        async def ssh() -> None:
            if size > 1:
                code = await provisioner.engine.exec(
                    provisioner.session_id, "main1", ["ssh", last, "true"]
                )
                if code != 0:
                    raise RuntimeError(f"ssh {last} true exited with {code}")

        await asyncio.gather(client.wait_for_ready(timeout=timeout), ssh())
        seconds = time.monotonic() - start
        if on_ready is not None:
            on_ready()
        if placement is not None:
            placement.update(await placement_of(provisioner.engine, provisioner.session_id))
        client.stop_channels()
        client = None
        begin = time.monotonic()
        await km.shutdown_kernel()
        shutdowns.append(time.monotonic() - begin)
        return seconds
    finally:
        if client is not None:
            client.stop_channels()
        if km.has_kernel:
            await km.shutdown_kernel(now=True)


async def gone(manager: Any, session_id: str) -> None:
    """Fail unless no container and no network of the session exists any more. Swarm
    workers' views of a removed overlay go by themselves a moment after its removal
    through the manager (as after the floor's): awaited, untimed, before the check."""
    from jupyter_cluster.core.naming import LABEL_SESSION

    labels = {LABEL_SESSION: session_id, MANAGER_LABEL: manager.store.manager_id}
    agents = manager.pool.agents.values()
    for agent in agents:
        if left := await agent.list_containers(labels):
            raise RuntimeError(f"session {session_id} left {left}")
    await manager.overlay_views.settled()
    for agent in agents:
        if left := await agent.list_networks(labels):
            raise RuntimeError(f"session {session_id} left {left}")


async def ours_terminate(
    manager: Any, spec: Any, check: Callable[[Any, str], Awaitable[Any]] | None = None
) -> float:
    """Launch ``spec`` with ``manager`` (untimed; then ``check(manager, session_id)``
    if given), then seconds of ``terminate`` until it returns; fails if anything of
    the session is left (:func:`gone`) or the check failed."""
    session = await manager.launch(spec)
    try:
        if check is not None:
            await check(manager, session.id)
    finally:
        start = time.monotonic()
        await manager.terminate(session.id)
        seconds = time.monotonic() - start
    await gone(manager, session.id)
    return seconds


async def ours_many(manager: Any, launches: int, spec: Any) -> float:
    """Seconds until ``launches`` concurrent launches of ``spec`` are all RUNNING."""
    start = time.monotonic()
    results = await asyncio.gather(
        *(manager.launch(spec) for _ in range(launches)), return_exceptions=True
    )
    seconds = time.monotonic() - start
    await asyncio.gather(*(manager.terminate(s.id) for s in results if hasattr(s, "id")))
    for failed in results:
        if isinstance(failed, BaseException):
            raise failed
    return seconds
