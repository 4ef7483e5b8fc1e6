"""The kernel provisioner against real Docker (issue #3): a real AsyncKernelManager
and client start, use, interrupt, restart, re-attach to and shut down a kernel
running in main1 of a cluster session.

Every test has its own workspace (``ws``: private Jupyter data/config/runtime
dirs, hence its own store and manager id) and installs its kernelspecs with
``jupyter cluster kernelspec install --prefix`` under it, found through
``JUPYTER_PATH``: nothing is written to the user's dirs. Kernels still running
at the end of a test are shut down; then the workspace fails the test if any
container or network labelled with its manager id remains (and removes them).
What Docker really did is checked with the ``docker`` command line.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import queue
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager
from jupyter_client.provisioning import KernelProvisionerFactory

from jupyter_cluster.config import local_owner
from jupyter_cluster.errors import LaunchFailed
from jupyter_cluster.provisioning.process import LOG_FIFO
from tests.support.constants import (
    HOSTS,
    LABEL_HOST,
    READY,
    SIZE3_FLAGS,
    SMALL_FLAGS,
    START_TIMEOUT,
)
from tests.support.docker import inspect, session_objects
from tests.support.kernels import json_of, ok_cell, reply_to, run_cell, start_client
from tests.support.processes import run
from tests.support.waiting import eventually

from .notebook_support import execute_notebook, kernel_name_of
from .support import Workspace

pytestmark = pytest.mark.docker

#: Starts a kernel of a kernelspec; returns its manager and a connected client.
Start = Callable[..., Awaitable[tuple[AsyncKernelManager, AsyncKernelClient]]]


# -- fixtures and helpers -------------------------------------------------------------


@pytest.fixture
def kernelspecs(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> Callable[..., str]:
    """Install cluster kernelspecs under the workspace (found via JUPYTER_PATH)."""
    return functools.partial(ws.install_kernelspec, monkeypatch)


@pytest.fixture
async def kernels(ws: Workspace) -> AsyncIterator[list[AsyncKernelManager]]:
    """Kernel managers of the test; whatever still runs is shut down afterwards."""
    managers: list[AsyncKernelManager] = []
    yield managers
    for km in managers:
        if km.has_kernel:
            await km.shutdown_kernel(now=True)


@pytest.fixture
def start(kernels: list[AsyncKernelManager]) -> Start:
    """``await start(kernel_name)``: a started kernel and a client that got kernel_info."""
    clients: list[AsyncKernelClient] = []

    async def starter(name: str) -> tuple[AsyncKernelManager, AsyncKernelClient]:
        km = AsyncKernelManager(kernel_name=name)
        kernels.append(km)
        kc = await start_client(km)
        clients.append(kc)
        return km, kc

    yield starter  # type: ignore[misc]
    for kc in clients:
        kc.stop_channels()


async def failed_start(
    kernels: list[AsyncKernelManager], name: str
) -> tuple[AsyncKernelManager, str, float]:
    """Start a kernel of ``name`` that must fail with LaunchFailed: its manager, the
    message and how long the start took."""
    km = AsyncKernelManager(kernel_name=name)
    kernels.append(km)
    began = time.monotonic()
    with pytest.raises(LaunchFailed) as failed:
        await km.start_kernel()
    return km, str(failed.value), time.monotonic() - began


def container_ids(session_id: str) -> list[str]:
    """The session's container ids, per Docker (by label), sorted."""
    return sorted(session_objects(session_id)[0])


def started_at(session_id: str) -> dict[str, str]:
    """When Docker last started each container of the session, by host."""
    data = inspect(*container_ids(session_id))
    return {d["Config"]["Labels"][LABEL_HOST]: d["State"]["StartedAt"] for d in data}


def history(ws: Workspace, session_id: str) -> dict[str, Any]:
    """The session as ``jupyter cluster ls --all --json`` lists it."""
    listed = {s["id"]: s for s in ws.json("ls", "--all")}
    assert session_id in listed, f"session {session_id} is not in `ls --all`"
    return listed[session_id]


def assert_gone(session_id: str) -> None:
    """No container and no network of the session is left, per Docker."""
    assert session_objects(session_id) == ([], [])


# -- starting: the kernel runs in main1 of a cluster session ----------------------------


async def test_kernel_runs_in_main1_of_the_cluster(
    ws: Workspace, kernelspecs: Callable[..., str], start: Start
) -> None:
    ws.ok_cli("folder", "create", "shared")
    (ws.folders_root / "shared" / "from-host.txt").write_text("written on the host\n")
    km, kc = await start(kernelspecs("itest-c3", *SIZE3_FLAGS, "--mount", "shared"))
    session = ws.show(km.provisioner.session_id)
    assert session["status"] == "RUNNING" and session["owner"] == local_owner()
    assert [c["host"] for c in session["containers"]] == HOSTS
    assert len(container_ids(session["id"])) == 3

    env = await json_of(kc, "{k: v for k, v in os.environ.items() if k.startswith('BACKENDAI_')}")
    assert env == {
        "BACKENDAI_CLUSTER_HOST": "main1",
        "BACKENDAI_CLUSTER_HOSTS": "main1,sub1,sub2",
        "BACKENDAI_CLUSTER_IDX": "1",
        "BACKENDAI_CLUSTER_MODE": "single-node",
        "BACKENDAI_CLUSTER_ROLE": "main",
        "BACKENDAI_CLUSTER_SIZE": "3",
        "BACKENDAI_CLUSTER_REPLICAS": "main:1,sub:2",
        "BACKENDAI_CLUSTER_LOCAL_RANK": "0",
        "BACKENDAI_KERNEL_ID": session["id"],
        "BACKENDAI_SESSION_ID": session["id"],
        "BACKENDAI_SESSION_NAME": session["name"],
        "BACKENDAI_USER_NAME": local_owner(),
        "BACKENDAI_KERNEL_IMAGE": session["image"],
        "BACKENDAI_PREOPEN_PORTS": "",
    }
    where = await json_of(kc, "[os.getcwd(), os.getuid(), __import__('socket').gethostname()]")
    assert where == ["/home/work", 1000, "main1"]
    # The connection file (with the key) is private to work; nothing of the launch leaks
    # into the kernel's environment.
    conn = await json_of(
        kc,
        "(lambda st: [oct(st.st_mode & 0o777), st.st_uid])(os.stat("
        "__import__('ipykernel.kernelapp').kernelapp.IPKernelApp.instance().connection_file))",
    )
    assert conn == ["0o600", 1000]
    assert await json_of(kc, "sorted(k for k in os.environ if k.startswith('JC_'))") == []

    # The data folder is mounted: the host's file is there, and the kernel's reaches the host.
    seen = await json_of(
        kc,
        "[open('/home/work/shared/from-host.txt').read(),"
        " open('/home/work/shared/from-kernel.txt', 'w').write('hello from main1')]",
    )
    assert seen == ["written on the host\n", 16]
    assert (ws.folders_root / "shared" / "from-kernel.txt").read_text() == "hello from main1"

    # SSH to a sub container, both through IPython's ! and through subprocess.
    cell = await run_cell(kc, "!ssh sub2 hostname")
    assert cell.status == "ok" and cell.stdout.strip() == "sub2", str(cell)
    remote = await json_of(
        kc,
        "__import__('subprocess').run(['ssh', 'sub1', 'echo $(hostname) $BACKENDAI_CLUSTER_ROLE'],"
        " capture_output=True, text=True, check=True).stdout",
    )
    assert remote == "sub1 sub\n"


async def test_a_client_of_a_new_kernel_is_ready_at_its_first_kernel_info(
    kernelspecs: Callable[..., str], kernels: list[AsyncKernelManager]
) -> None:
    # The client connects while the kernel in main1 still imports, through the SSH
    # tunnel. Its IOPub must be subscribed before the first kernel_info is answered:
    # else the kernel's busy/idle for it are lost, wait_for_ready waits 0.2 s for IOPub
    # and asks again. So IOPub must carry the status of the very first ask (on a
    # loaded machine a reply or a status may come late, and wait_for_ready then asks
    # again: not a fault).
    km = AsyncKernelManager(kernel_name=kernelspecs("itest-first", "--cpu", "1", "--mem", "512m"))
    kernels.append(km)
    await asyncio.wait_for(km.start_kernel(), START_TIMEOUT)
    kc = km.client()
    asks: list[str] = []
    parents: list[str] = []  # the request each IOPub message answers, in order
    plain = kc.kernel_info

    def counted() -> str:
        asks.append(plain())
        return asks[-1]

    kc.kernel_info = counted  # type: ignore[method-assign]
    kc.start_channels()
    get = kc.iopub_channel.get_msg

    async def recorded(*args: Any, **kwargs: Any) -> Any:
        msg = await get(*args, **kwargs)
        parents.append(msg["parent_header"].get("msg_id", ""))
        return msg

    kc.iopub_channel.get_msg = recorded  # type: ignore[method-assign]
    try:
        await kc.wait_for_ready(timeout=60)
        with contextlib.suppress(queue.Empty):  # what came after wait_for_ready read
            while True:
                await kc.iopub_channel.get_msg(timeout=1)
    finally:
        kc.stop_channels()
    assert asks and asks[0] in parents, (asks, parents)


async def test_kernel_output_goes_to_main1_log(
    ws: Workspace, kernelspecs: Callable[..., str], start: Start
) -> None:
    km, kc = await start(kernelspecs("itest-c2", "--size", "2", *SMALL_FLAGS))
    token = f"marker-{time.monotonic_ns()}"
    code = (
        "import os, sys\n"
        f"print('{token}-stdout', file=sys.__stdout__, flush=True)\n"
        f"print('{token}-stderr', file=sys.__stderr__, flush=True)\n"
        f"os.write(2, b'{token}-fd2\\n')\n"
    )
    await ok_cell(kc, code)
    session_id = km.provisioner.session_id

    log = ""

    async def logged() -> bool:
        nonlocal log
        log = ws.ok_cli("logs", session_id, "main1").stdout
        return all(f"{token}-{s}" in log for s in ("stdout", "stderr", "fd2"))

    await eventually(logged, 10, "the kernel's output in main1's log", seen=lambda: log)
    assert READY in log  # the same log as the start-up script's
    assert token not in ws.ok_cli("logs", session_id, "sub1").stdout


# -- interrupt, restart, crash ----------------------------------------------------------


async def test_interrupt_stops_a_running_cell(
    kernelspecs: Callable[..., str], start: Start
) -> None:
    km, kc = await start(kernelspecs("itest-c2", "--size", "2", *SMALL_FLAGS))
    # stop_on_error=False: otherwise ipykernel aborts requests that arrive just after
    # the KeyboardInterrupt reply (its stop_on_error window).
    msg_id = kc.execute("import time\ntime.sleep(60)", stop_on_error=False)
    while True:  # wait until the cell really runs
        msg = await kc.get_iopub_msg(timeout=30)
        if msg["msg_type"] == "execute_input" and msg["parent_header"]["msg_id"] == msg_id:
            break
    await asyncio.sleep(0.5)
    began = time.monotonic()
    await km.interrupt_kernel()
    reply = await reply_to(kc, msg_id, timeout=10)
    elapsed = time.monotonic() - began
    assert reply["content"]["status"] == "error"
    assert reply["content"]["ename"] == "KeyboardInterrupt"
    assert elapsed < 2, f"the interrupt took {elapsed:.2f} s"
    assert await km.is_alive()
    cell = await run_cell(kc, "print(6 * 7)")
    assert cell.status == "ok", cell.reply
    assert cell.stdout.strip() == "42"


async def test_restart_keeps_the_cluster_and_clears_state(
    kernelspecs: Callable[..., str], start: Start
) -> None:
    km, kc = await start(kernelspecs("itest-c3", *SIZE3_FLAGS))
    session_id = km.provisioner.session_id
    before_ids, before_started = container_ids(session_id), started_at(session_id)
    assert len(before_ids) == 3
    pid = await json_of(kc, "(defined_before := os.getpid())")

    await km.restart_kernel()
    await kc.wait_for_ready(timeout=60)

    assert km.provisioner.session_id == session_id
    assert container_ids(session_id) == before_ids
    assert started_at(session_id) == before_started  # no container was restarted either
    assert await json_of(kc, "'defined_before' in globals()") is False
    assert await json_of(kc, "os.getpid()") != pid
    assert await json_of(kc, "os.environ['BACKENDAI_SESSION_ID']") == session_id
    cell = await run_cell(kc, "!ssh sub1 hostname")
    assert cell.status == "ok" and cell.stdout.strip() == "sub1"


async def test_crash_is_seen_at_once_and_restart_recovers(
    kernelspecs: Callable[..., str], start: Start
) -> None:
    km, kc = await start(kernelspecs("itest-c2", "--size", "2", *SMALL_FLAGS))
    session_id = km.provisioner.session_id
    ids = container_ids(session_id)
    kc.execute("import os\nos._exit(1)", reply=False)
    began = time.monotonic()
    while await km.is_alive():
        assert time.monotonic() - began < 10, "the kernel's end was not noticed in 10 s"
        await asyncio.sleep(0.02)
    noticed = time.monotonic() - began
    assert noticed < 1.0, f"the crash was noticed after {noticed:.2f} s"
    assert container_ids(session_id) == ids  # only the kernel died, not main1

    # Drop what the dead kernel published before dying: wait_for_ready takes any
    # IOPub message as proof that IOPub is connected, a stale one included.
    with contextlib.suppress(queue.Empty):
        while True:
            await kc.get_iopub_msg(timeout=0.5)
    await km.restart_kernel(now=True)
    await kc.wait_for_ready(timeout=60)
    assert await km.is_alive()
    assert await json_of(kc, "os.environ['BACKENDAI_CLUSTER_HOST']") == "main1"
    assert container_ids(session_id) == ids


# -- shutdown ---------------------------------------------------------------------------


async def test_shutdown_terminates_the_session(
    ws: Workspace, kernelspecs: Callable[..., str], start: Start
) -> None:
    """The subs go while the kernel exits (issue 27 item 2); the kernel still runs
    its exit actions, into main1's kept log, and every container's log and CPU time
    are kept. The kernel froze its start-up objects (``gc_freeze_startup``)."""
    km, kc = await start(kernelspecs("itest-c3", *SIZE3_FLAGS))
    session_id = km.provisioner.session_id
    containers, networks = session_objects(session_id)
    assert len(containers) == 3 and len(networks) == 1
    assert await json_of(kc, "__import__('gc').get_freeze_count()") > 10_000
    await ok_cell(  # into the log the start-up script copies (the kernel's own output)
        kc,
        f"import atexit; log = open({LOG_FIFO!r}, 'a', buffering=1)\n"
        "atexit.register(log.write, 'exit actions ran\\n')",
    )

    await km.shutdown_kernel()

    assert not km.has_kernel
    assert_gone(session_id)
    record = history(ws, session_id)
    assert record["status"] == "TERMINATED"
    assert all(c["status"] == "TERMINATED" for c in record["containers"])
    assert all(c["cpu_seconds"] is not None for c in record["containers"])
    assert session_id not in {s["id"] for s in ws.json("ls")}
    assert "exit actions ran" in ws.ok_cli("logs", session_id, "main1").stdout
    assert ws.ok_cli("logs", session_id, "sub2").stdout.strip()


# -- re-attaching from another process --------------------------------------------------

FIRST_SERVER = """
import asyncio, json, os, sys
from jupyter_client.manager import AsyncKernelManager

async def main():
    km = AsyncKernelManager(kernel_name=sys.argv[1])
    await km.start_kernel()
    kc = km.client()
    kc.start_channels()
    await kc.wait_for_ready(timeout=60)
    await kc.execute_interactive("survivor = 'set through the first server'", timeout=30)
    kc.stop_channels()
    info = await km.provisioner.get_provisioner_info()
    print(json.dumps({"kernel_id": km.kernel_id, "provisioner_info": info}), flush=True)
    os._exit(0)  # the server goes away without shutting its kernel down

asyncio.run(main())
"""


async def test_second_manager_reattaches_with_provisioner_info(
    ws: Workspace, kernelspecs: Callable[..., str], kernels: list[AsyncKernelManager]
) -> None:
    name = kernelspecs("itest-c2", "--size", "2", *SMALL_FLAGS)
    first = run((sys.executable, "-c", FIRST_SERVER, name), env=ws.env, timeout=START_TIMEOUT)
    assert first.returncode == 0, str(first)
    saved = json.loads(first.stdout.strip().splitlines()[-1])  # JSON-safe, as servers persist it
    info = saved["provisioner_info"]
    session_id = info["session_id"]
    assert len(container_ids(session_id)) == 2

    km = AsyncKernelManager(kernel_name=name, kernel_id=saved["kernel_id"])
    kernels.append(km)
    factory = KernelProvisionerFactory.instance(parent=km.parent)
    km.provisioner = factory.create_provisioner_instance(km.kernel_id, km.kernel_spec, parent=km)
    await km.provisioner.load_provisioner_info(info)
    km.load_connection_info(info["connection_info"])
    assert km.has_kernel
    assert await km.is_alive()

    kc = km.client()
    kc.start_channels()
    try:
        await kc.wait_for_ready(timeout=30)
        assert await json_of(kc, "survivor") == "set through the first server"  # the same kernel
        msg_id = kc.execute("import time\ntime.sleep(60)", stop_on_error=False)
        await asyncio.sleep(1)
        began = time.monotonic()
        await km.interrupt_kernel()
        reply = await reply_to(kc, msg_id, timeout=10)
        assert reply["content"]["ename"] == "KeyboardInterrupt"
        assert time.monotonic() - began < 2
    finally:
        kc.stop_channels()

    await km.shutdown_kernel()
    assert not await km.is_alive()
    assert_gone(session_id)
    assert history(ws, session_id)["status"] == "TERMINATED"


# -- launch_timeout ---------------------------------------------------------------------


async def test_launch_timeout_while_pending_cancels_the_session(
    ws: Workspace, kernelspecs: Callable[..., str], kernels: list[AsyncKernelManager]
) -> None:
    # One agent with room for 1 CPU, read from jupyter_cluster_config.py by the CLI and by
    # the provisioner alike; a session of the CLI takes all of it.
    ws.write_config('c.ClusterManager.agents = [{"id": "local", "cpu": 1, "mem": "2g"}]\n')
    occupier = ws.launch("--cpu", "1", "--mem", "256m")
    name = kernelspecs("itest-wait", "--cpu", "0.5", "--mem", "256m", "--launch-timeout", "3")
    km, message, elapsed = await failed_start(kernels, name)
    try:
        assert "was not ready within 3 s" in message, message
        assert "PENDING" in message and "cancelled" in message, message
        assert 3 <= elapsed < 6, f"start_kernel failed after {elapsed:.1f} s"
        assert not km.has_kernel and km.provisioner.session_id is None
        ended = [s for s in ws.json("ls", "--all") if s["id"] != occupier["id"]]
        assert [s["status"] for s in ended] == ["CANCELLED"]
        assert ws.docker_objects()[0] == sorted(c["container_id"] for c in occupier["containers"])
    finally:
        ws.ok_cli("rm", occupier["id"])


async def test_launch_timeout_while_preparing_removes_everything(
    ws: Workspace, kernelspecs: Callable[..., str], kernels: list[AsyncKernelManager]
) -> None:
    name = kernelspecs(
        "itest-slow",
        "--size",
        "2",
        *SMALL_FLAGS,
        "--bootstrap",
        "sleep 30",
        "--launch-timeout",
        "4",
    )
    _km, message, elapsed = await failed_start(kernels, name)
    assert "was not ready within 4 s" in message and "PREPARING" in message, message
    assert "removed" in message and "launch_timeout" in message, message
    assert 4 <= elapsed < 12, f"start_kernel failed after {elapsed:.1f} s"
    [record] = ws.json("ls", "--all")
    assert record["status"] in ("TERMINATED", "CANCELLED", "ERROR"), record
    assert_gone(record["id"])
    assert ws.docker_objects() == ([], [])


# -- the example notebook -----------------------------------------------------------------


def test_cluster_tour_notebook_runs(ws: Workspace, kernelspecs: Callable[..., str]) -> None:
    kernel_name = kernel_name_of("cluster_tour.ipynb")
    ws.ok_cli("folder", "create", "tour-data")
    kernelspecs(kernel_name, *SIZE3_FLAGS, "--mount", "tour-data")
    text = execute_notebook(ws, "cluster_tour.ipynb", kernel_name).text
    assert "BACKENDAI_CLUSTER_HOSTS       main1,sub1,sub2" in text
    assert "3 hosts: main1, sub1, sub2" in text
    assert "ssh sub1   -> hostname sub1, role sub, rank 1" in text
    assert "ssh sub2   -> hostname sub2, role sub, rank 2" in text
    assert "hello from sub1" in text
    assert "sub2 reads /home/work/tour-data/" in text
    # Shutting the notebook's kernel down ended its session.
    [record] = ws.json("ls", "--all")
    assert record["status"] == "TERMINATED"
    assert_gone(record["id"])
