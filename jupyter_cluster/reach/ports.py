"""How the kernel manager reaches the kernel in main1, and the kernel's own connection file.

Used by :class:`~jupyter_cluster.provisioning.provisioner.ClusterProvisioner`.
Per agent (``kernel_transport``):

- ``direct``: the kernel manager connects to main1's kernel ports published on the
  agent's address (loopback by default, as Jupyter does for local kernels);
- ``ssh``: main1 publishes only its SSH port; the kernel's ports are forwarded to
  local loopback ports through an SSH tunnel (:mod:`jupyter_cluster.reach.tunnel`)
  with the session's key and main1's host key, so the traffic is encrypted and
  authenticated, and the kernel listens on main1's loopback only.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

from ..core import naming
from ..engine.agents.base import Agent, ContainerState
from ..errors import ClusterError
from .tunnel import KernelTunnel

PORT_NAMES = ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port")


async def wait_running(agent: Agent, container_id: str) -> ContainerState:
    """main1's state once Docker has started it (its ports are assigned then)."""
    while True:
        state = await agent.inspect_container(container_id)
        if state is None or state.running or state.status not in ("created", "restarting"):
            break
        await asyncio.sleep(0.02)
    if state is None or not state.running:
        raise ClusterError("main1 stopped while the cluster session was starting")
    return state


async def connect_kernel(
    km: Any,
    agent: Agent,
    state: ContainerState,
    keys: Mapping[str, str],
    previous: Mapping[str, Any],
) -> KernelTunnel | None:
    """Point ``km`` (a KernelManager) at the kernel in main1; the tunnel, if one.

    ``previous`` is an earlier connection info whose local ports an SSH tunnel
    takes again (a re-attaching kernel manager keeps its connection file).
    """
    tunnel = None
    if agent.config.kernel_transport == "ssh":
        if not keys or naming.SSH_PORT not in state.ports:
            raise ClusterError("main1 has no SSH key material or no SSH port to tunnel to")
        timeout = agent.config.connect_timeout + agent.config.timeout
        address, port = agent.config.connect_address, state.ports[naming.SSH_PORT][1]
        return await tunnel_kernel(km, address, port, keys, previous, timeout)
    km.ip = agent.config.connect_address
    _point(km, [state.ports[p][1] for p in naming.KERNEL_PORTS])
    return tunnel


def _point(km: Any, ports: list[int]) -> None:
    km.transport = "tcp"
    for name, port in zip(PORT_NAMES, ports, strict=True):
        setattr(km, name, port)
    km.write_connection_file()


async def tunnel_kernel(
    km: Any,
    address: str,
    port: int,
    keys: Mapping[str, str],
    previous: Mapping[str, Any],
    timeout: float,
) -> KernelTunnel:
    """Point ``km`` at the kernel in main1 through an SSH tunnel to ``address:port``
    (main1's published SSH port); taking ``previous``'s local ports again if given."""
    reuse = {
        inner: int(previous[name])
        for name, inner in zip(PORT_NAMES, naming.KERNEL_PORTS, strict=True)
        if previous.get(name)
    }
    tunnel = KernelTunnel(address, port, keys, connect_timeout=timeout)
    local = await tunnel.open(naming.KERNEL_PORTS, reuse)
    km.ip = "127.0.0.1"
    _point(km, [local[p] for p in naming.KERNEL_PORTS])
    return tunnel


def kernel_side_connection(km: Any, transport: str) -> bytes:
    """The connection file as the kernel in main1 sees it: fixed ports, ``km``'s key;
    over SSH it listens on main1's loopback only."""
    key = km.session.key
    info: dict[str, Any] = {
        "transport": "tcp",
        "ip": "127.0.0.1" if transport == "ssh" else "0.0.0.0",
        "signature_scheme": km.session.signature_scheme,
        "key": key.decode() if isinstance(key, bytes) else key,
    }
    for name, port in zip(PORT_NAMES, naming.KERNEL_PORTS, strict=True):
        info[name] = port
    return json.dumps(info).encode()
