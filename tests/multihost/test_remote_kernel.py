"""A kernel in main1 on a remote agent, its traffic forwarded over SSH.

The agent publishes on its own (non-loopback) address, so its kernel transport
defaults to SSH: main1 publishes only its SSH port, the provisioner forwards the
kernel's ports to this machine's loopback through it, and the kernel listens on
main1's loopback. A plain ZMQ subscriber on the agent's address reads nothing of
a kernel that prints a canary, while the real client sees it; interrupt,
restart (same containers) and shutdown (nothing left) work as with local agents.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import zmq
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from traitlets.config import Config

from jupyter_cluster.core import naming
from jupyter_cluster.core.models import LaunchSpec
from jupyter_cluster.provisioning import kernelspec
from tests.support.kernels import ok_cell, reply_to, run_cell, start_client

from .agents import AgentCluster
from .support import leftovers

pytestmark = pytest.mark.docker


@pytest.fixture
async def remote_kernel(
    tmp_path: Path, agents: AgentCluster
) -> AsyncIterator[tuple[AsyncKernelManager, Any]]:
    """A started cluster kernel (size 2) on agent2, and its client."""
    agent = agents["agent2"]
    spec = LaunchSpec.create(image=naming.DEFAULT_IMAGE, size=2, cpu=0.5, mem="512m")
    kernels = tmp_path / "kernels" / "remote"
    kernels.mkdir(parents=True)
    config = kernelspec.provisioner_config(spec, False, 240.0)
    (kernels / "kernel.json").write_text(json.dumps(kernelspec.kernel_json("Remote", config)))
    engine = {
        "agents": [agent.config(cpu=2, mem="4g")],
        "db_path": str(tmp_path / "cluster.db"),
        "data_root": agents.data_root,
        "docker_timeout": 20.0,
    }
    km = AsyncKernelManager(
        kernel_name="remote",
        kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(kernels.parent)]),
        config=Config({"ClusterManager": engine}),
    )
    kc = await start_client(km)
    manager_id = km.provisioner.engine.store.manager_id  # type: ignore[union-attr]
    yield km, kc
    kc.stop_channels()
    if km.has_kernel:
        await km.shutdown_kernel(now=True)
    assert leftovers(agents, manager_id) == {}


def subscribe_and_listen(address: str, ports: list[int], seconds: float) -> list[bytes]:
    """Connect a plain ZMQ SUB socket (no key, subscribed to everything) to each port
    of ``address``; whatever arrives within ``seconds``."""
    context = zmq.Context()
    sub = context.socket(zmq.SUB)
    sub.setsockopt(zmq.LINGER, 0)
    sub.setsockopt(zmq.SUBSCRIBE, b"")
    for port in ports:
        sub.connect(f"tcp://{address}:{port}")
    received: list[bytes] = []
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            if sub.poll(100):
                received.extend(sub.recv_multipart())
    finally:
        sub.close()
        context.term()
    return received


async def test_kernel_traffic_is_not_readable_on_the_agents_network(
    remote_kernel: tuple[AsyncKernelManager, Any], agents: AgentCluster
) -> None:
    km, kc = remote_kernel
    agent = agents["agent2"]
    # The kernel manager talks to the tunnel's local end: Unix sockets in a directory
    # only this user can enter, not loopback ports every local user could reach.
    assert km.transport == "ipc", km.get_connection_info()
    private = os.stat(os.path.dirname(km.ip))
    assert stat.S_IMODE(private.st_mode) == 0o700 and private.st_uid == os.getuid()
    assert all(stat.S_ISSOCK(os.stat(f"{km.ip}-{n}").st_mode) for n in range(1, 6))
    provisioner: Any = km.provisioner
    session = await provisioner.engine.get(provisioner.session_id)
    main = session.containers[0]
    assert main.agent == "agent2"
    published = agent.docker("port", main.container_id or "").stdout
    assert f"{naming.SSH_PORT}/tcp" in published
    assert all(f"{p}/tcp" not in published for p in naming.KERNEL_PORTS), published
    ssh_port = int(published.split(":")[-1].split()[0])
    canary = f"canary-{uuid.uuid4().hex}"
    code = (
        f"import time\nfor _ in range(25):\n    print({canary!r}, flush=True)\n    time.sleep(0.2)"
    )
    cell, heard = await asyncio.gather(
        run_cell(kc, code, timeout=60),
        asyncio.to_thread(subscribe_and_listen, agent.ip, [*naming.KERNEL_PORTS, ssh_port], 4.0),
    )
    assert canary in cell.stdout  # the real client hears it
    assert not any(canary.encode() in frame for frame in heard)
    assert heard == []


async def test_interrupt_restart_and_shutdown_of_a_remote_kernel(
    remote_kernel: tuple[AsyncKernelManager, Any], agents: AgentCluster
) -> None:
    km, kc = remote_kernel
    provisioner: Any = km.provisioner
    session_id = provisioner.session_id
    before = [c.container_id for c in (await provisioner.engine.get(session_id)).containers]

    # stop_on_error=False: otherwise ipykernel aborts requests that arrive just after
    # the KeyboardInterrupt reply, and the next cell could come back "aborted".
    msg_id = kc.execute("import time; time.sleep(120)", stop_on_error=False)
    await asyncio.sleep(1.5)
    began = time.monotonic()
    await km.interrupt_kernel()
    reply = await reply_to(kc, msg_id, timeout=30)
    assert reply["content"]["status"] == "error"
    assert reply["content"]["ename"] == "KeyboardInterrupt"
    assert time.monotonic() - began < 15

    await ok_cell(kc, "answer = 41")
    await km.restart_kernel(now=True)
    await kc.wait_for_ready(timeout=60)
    cell = await run_cell(kc, "print('answer' in globals(), 6 * 7)")
    assert cell.stdout.strip() == "False 42"  # a fresh kernel, in the same containers
    after = [c.container_id for c in (await provisioner.engine.get(session_id)).containers]
    assert after == before

    manager_id = provisioner.engine.store.manager_id
    await km.shutdown_kernel()
    assert not km.has_kernel
    assert leftovers(agents, manager_id) == {}
