"""How the kernel manager reaches the kernel in main1, and the kernel's own connection file.

Used by :class:`~jupyter_cluster.provisioning.provisioner.ClusterProvisioner`.
Per agent (``kernel_transport``):

- ``direct``: the kernel manager connects to main1's kernel ports published on the
  agent's address (loopback by default, as Jupyter does for local kernels);
- ``ssh``: main1 publishes only its SSH port; the kernel's ports are forwarded to
  Unix sockets in a private directory of this machine through an SSH tunnel
  (:mod:`jupyter_cluster.reach.tunnel`) with the session's key and main1's host
  key, and the kernel manager uses ZMQ's ``ipc`` transport: the traffic is
  encrypted and authenticated, no other local user can connect to it, and the
  kernel listens on Unix sockets in main1 (:func:`~jupyter_cluster.core.naming.kernel_sockets`),
  not on any TCP port, so a host-network main1 opens nothing on its agent host either.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping
from typing import Any

from .. import private_dirs
from ..core import naming
from ..engine.agents.base import Agent, ContainerState
from ..errors import ClusterError
from ..private_dirs import PrivateDir
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


def kernel_listen_address(agent: Agent, state: ContainerState) -> str:
    """Where main1's kernel listens when that is not its transport's default: on a
    host-network main1 reached directly, the agent's address only (as Docker would
    publish the ports), not every interface of the agent's host. Over SSH it listens
    on Unix sockets in main1 (no address)."""
    if state.host_network and agent.config.kernel_transport != "ssh":
        return agent.config.connect_address
    return ""


def _point(km: Any, ports: list[int], transport: str = "tcp") -> None:
    km.transport = transport
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
    (main1's published SSH port), on Unix sockets in a private directory: the same
    ones as ``previous`` if given (a kernel manager re-attaching keeps its
    connection file)."""
    directory, prefix = socket_place(previous)
    tunnel = KernelTunnel(address, port, keys, directory, prefix, connect_timeout=timeout)
    km.ip = tunnel.prefix
    kernel_id = getattr(km, "kernel_id", None)
    if not kernel_id:
        directory.remove()
        raise ClusterError("a kernel reached over SSH needs its kernel manager's kernel_id")
    iopub = PORT_NAMES.index("iopub_port")  # subscribed before a request is answered
    try:
        ports = await tunnel.open(naming.kernel_sockets(kernel_id), lead=iopub)
    except BaseException:
        await tunnel.close()  # its directory too: nothing will connect there
        raise
    _point(km, ports, transport="ipc")
    return tunnel


def socket_place(previous: Mapping[str, Any]) -> tuple[PrivateDir, str]:
    """Where a kernel's tunnel sockets go, held (see :mod:`jupyter_cluster.private_dirs`),
    and their names' prefix: ``previous``'s place if it used one and its directory is
    (or can again be) this user's alone, else a new private directory."""
    prior = str(previous.get("ip") or "") if previous.get("transport") == "ipc" else ""
    if prior:
        kept = private_dirs.hold(os.path.dirname(prior))
        if kept is not None:
            return kept, prior
    made = private_dirs.make()
    return made, os.path.join(made.path, "kernel")


def kernel_side_connection(km: Any, transport: str, ip: str = "") -> bytes:
    """The connection file as the kernel in main1 sees it: fixed ports, ``km``'s key.
    Over SSH it listens on Unix sockets in main1 named after ``km.kernel_id`` (see
    :func:`~jupyter_cluster.core.naming.kernel_sockets`); directly on TCP, on ``ip``
    if given (a host-network main1: its agent's address), else every interface of
    main1."""
    key = km.session.key
    info: dict[str, Any] = {
        "signature_scheme": km.session.signature_scheme,
        "key": key.decode() if isinstance(key, bytes) else key,
    }
    if transport == "ssh":
        info.update(transport="ipc", ip=naming.kernel_socket_prefix(km.kernel_id))
    else:
        info.update(transport="tcp", ip=ip or "0.0.0.0")
    for name, port in zip(PORT_NAMES, naming.KERNEL_PORTS, strict=True):
        info[name] = port
    return json.dumps(info).encode()
