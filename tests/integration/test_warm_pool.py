"""The warm pool on real Docker (issue #13, item 5): a matching launch takes prepared
containers and still gets everything a fresh session has; the pool gives way to
sessions and leaves nothing behind.
"""

from __future__ import annotations

import asyncio
import json
import subprocess

import pytest
from jupyter_client.manager import AsyncKernelManager

from jupyter_cluster.core import naming
from jupyter_cluster.core.models import Session
from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.engine.manager import ClusterManager
from tests.support.debugger import stops_at_a_breakpoint
from tests.support.kernels import json_of, ok_cell, reply_to, start_client

from .support import Workspace

pytestmark = pytest.mark.docker

SHAPE = {"cpu": 0.25, "mem": "256m", "size": 2}


async def run(manager: ClusterManager, session: Session, host: str, script: str) -> str:
    """``script``'s output in ``host``, through the engine's exec (as `work`)."""
    out = bytearray()

    def collect(_stream: int, data: bytes) -> None:
        out.extend(data)

    code = await manager.exec(session.id, host, ["/bin/sh", "-c", script], on_output=collect)
    assert code == 0, out.decode()
    return out.decode().strip()


def inspect(container_id: str) -> dict:
    """``docker inspect`` of one container."""
    done = subprocess.run(
        ["docker", "inspect", container_id], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)[0]


async def test_a_matching_launch_takes_warm_containers_and_is_a_fresh_session(
    ws: Workspace,
) -> None:
    manager = ws.manager(warm_pool=[SHAPE])
    try:
        await manager.start()
        assert await manager.warm.fill() == 1  # one set: main1 and sub1
        (ready,) = manager.warm.table.ready()
        warm = manager.warm.table.containers_of(ready.set_id)
        assert len(warm) == 2
        assert await manager.warm.fill() == 0  # full

        spec = manager.make_spec(size=2, cpu=0.25, mem="256m")
        first = await manager.launch(spec)
        assert {c.container_id for c in first.containers} == warm
        assert manager.warm.table.ready() == []
        assert first.network.startswith("jc-warm-")
        for container in first.containers:
            data = inspect(container.container_id or "")
            assert data["Config"]["Hostname"] == container.host
            assert list(data["NetworkSettings"]["Networks"]) == [first.network]
        assert await run(manager, first, "sub1", "hostname") == "sub1"
        # work's run folder and log FIFO: a warm container's start-up script makes them
        # (a fresh container's files bring them) and gives them to work.
        owned = f"stat -c '%U %a' {naming.RUN_DIR} {naming.LOG_FIFO}"
        for host in ("main1", "sub1"):
            assert (await run(manager, first, host, owned)).splitlines() == [
                "work 755",
                "work 600",
            ]
        env = await run(
            manager, first, "main1", "echo $BACKENDAI_SESSION_ID $BACKENDAI_CLUSTER_HOSTS"
        )
        assert env == f"{first.id} main1,sub1"
        over_ssh = await run(manager, first, "main1", "ssh sub1 'echo $BACKENDAI_SESSION_ID'")
        assert over_ssh == first.id
        await run(manager, first, "main1", "echo secret > ~/left-by-first")
        host_key_1 = await run(manager, first, "sub1", "cat /opt/jupyter-cluster/*.pub")

        # The reconciler sees whose the (unlabelled) warm containers are now.
        await manager.refresh()
        assert (await manager.get(first.id)).status is SessionStatus.RUNNING

        assert await manager.warm.fill() == 1  # refilled
        second = await manager.launch(spec)
        assert not {c.container_id for c in second.containers} & warm
        assert second.network.startswith("jc-warm-") and second.network != first.network
        assert await run(manager, second, "main1", "ls ~/left-by-first 2>&1 || true") != "secret"
        assert "No such file" in await run(
            manager, second, "main1", "ls ~/left-by-first 2>&1 || true"
        )
        host_key_2 = await run(manager, second, "sub1", "cat /opt/jupyter-cluster/*.pub")
        assert host_key_1 != host_key_2
        assert await run(manager, second, "main1", "ssh sub1 hostname") == "sub1"

        # Another shape launches cold, beside the pool.
        cold = await manager.launch(manager.make_spec(size=1, cpu=0.5, mem="256m"))
        assert (
            naming.LABEL_SESSION
            in inspect(cold.containers[0].container_id or "")["Config"]["Labels"]
        )
        for session in (first, second, cold):
            await manager.terminate(session.id)
        networks = subprocess.run(
            ["docker", "network", "ls", "--format", "{{.Name}}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        assert first.network not in networks and second.network not in networks
        await manager.warm.drain()
        assert manager.warm.table.known() == (set(), set())
    finally:
        await manager.close()


async def test_the_pool_gives_way_to_a_session_that_needs_its_room(ws: Workspace) -> None:
    agents = [{"id": "local", "cpu": 1.0, "mem": "4g"}]
    manager = ws.manager(warm_pool=[{"cpu": 0.5, "mem": "256m", "size": 2}], agents=agents)
    try:
        await manager.start()
        assert await manager.warm.fill() == 1  # the whole agent, in one warm set
        big = await manager.launch(manager.make_spec(size=1, cpu=1.0, mem="256m"))
        assert big.status is SessionStatus.RUNNING
        assert manager.warm.table.ready() == []  # removed to make room
        mine = f"label={naming.LABEL_MANAGER}={ws.manager_id}"
        warm = f"label={naming.LABEL_WARM}"
        left = subprocess.run(
            ["docker", "ps", "-aq", "--no-trunc", "--filter", mine, "--filter", warm],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        assert not set(left) - {c.container_id for c in big.containers}
        assert await manager.warm.fill() == 0  # no free capacity: nothing made
        await manager.terminate(big.id)
        assert await manager.warm.fill() == 1  # room again
        await manager.warm.drain()
    finally:
        await manager.close()


async def test_a_kernel_on_a_warm_set_is_the_prestarted_interpreter_and_behaves(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kernel takes over main1's waiting interpreter (ipykernel imported ahead),
    and is then a kernel like any other: the session's environment, %cluster, the
    Lab's debugger stopping at a breakpoint, an interrupt, a restart (the usual way),
    a shutdown that ends the session."""
    pool = [{"cpu": 0.25, "mem": "256m", "size": 2}]
    ws.write_config(f"c.ClusterManager.warm_pool = {pool!r}\n")
    name = ws.install_kernelspec(
        monkeypatch, "itest-warm", "--size", "2", "--cpu", "0.25", "--mem", "256m"
    )
    keeper = ws.manager(warm_pool=pool)
    km = AsyncKernelManager(kernel_name=name)
    try:
        await keeper.start()
        assert await keeper.warm.fill() == 1
        kc = await start_client(km)
        try:
            session_id = km.provisioner.session_id  # type: ignore[union-attr]
            assert keeper.warm.table.ready() == []  # its set was taken
            cmdline = "open(f'/proc/{os.getpid()}/cmdline').read().replace(chr(0), ' ')"
            assert "prestart.py" in await json_of(kc, cmdline)
            # started ahead as the kernel it becomes would be (core.kernel_command)
            frozen = "__import__('sys')._xoptions.get('frozen_modules')"
            assert await json_of(kc, frozen) == "off"
            assert await json_of(kc, "os.environ.get('JPY_PARENT_PID')") == "1"
            assert await json_of(kc, "os.environ['BACKENDAI_SESSION_ID']") == session_id
            assert await json_of(kc, "os.getcwd()") == "/home/work"
            cell = await ok_cell(kc, "%cluster hosts")
            assert "sub1" in cell.stdout
            await stops_at_a_breakpoint(kc)  # the Lab's debugger, in the handed-over kernel
            msg_id = kc.execute("import time\ntime.sleep(60)", stop_on_error=False)
            while True:  # wait until the cell really runs
                msg = await kc.get_iopub_msg(timeout=30)
                if msg["msg_type"] == "execute_input":
                    break
            await asyncio.sleep(0.5)
            await km.interrupt_kernel()
            reply = await reply_to(kc, msg_id, timeout=10)
            assert reply["content"]["ename"] == "KeyboardInterrupt"
            await km.restart_kernel()
            await kc.wait_for_ready(timeout=60)
            assert "ipykernel_launcher" in await json_of(kc, cmdline)
            assert await json_of(kc, frozen) == "off"
            main1 = (await keeper.get(session_id)).containers[0].container_id or ""
            log = subprocess.run(
                ["docker", "logs", main1], capture_output=True, text=True, check=True
            )
            said = log.stdout + log.stderr
            assert "Debugger warning" not in said and "Ctrl-C will not work" not in said, said
            assert await json_of(kc, "os.environ['BACKENDAI_CLUSTER_HOST']") == "main1"
        finally:
            kc.stop_channels()
        await km.shutdown_kernel()
        ended = await keeper.get(session_id)
        assert ended.status is SessionStatus.TERMINATED
        await keeper.warm.drain()
    finally:
        if km.has_kernel:
            await km.shutdown_kernel(now=True)
        await keeper.close()
