"""Timing a session's ``kernel_ready`` phase: until its kernel first answers.

Called by :class:`~.provisioner.ClusterProvisioner` (in the background, once per
session) after it started the kernel; the provisioner keeps the result with the
session's other launch timings (see :mod:`jupyter_cluster.core.timings`).

The probe is the kernel's heartbeat, which echoes and publishes nothing: a
``kernel_info`` request would make the kernel publish busy and idle on IOPub, so
clients would see an execution state change no one of theirs caused (a local
kernel still says ``starting`` then).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

import zmq
import zmq.asyncio
from jupyter_client.connect import KernelConnectionInfo

from ..core import timings
from ..core.models import Session

#: Seconds one heartbeat may take before it is sent again on a new socket.
PING_TIMEOUT = 0.5


async def heartbeat_answers(connection_info: KernelConnectionInfo, timeout: float) -> bool:
    """Whether the kernel's heartbeat echoes within ``timeout`` seconds."""
    transport = connection_info.get("transport", "tcp")
    separator = "-" if transport == "ipc" else ":"  # ZMQ's ipc names: {ip}-{port}
    address = f"{transport}://{connection_info['ip']}{separator}{connection_info['hb_port']}"
    context = zmq.asyncio.Context.instance()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        socket = context.socket(zmq.REQ)
        socket.linger = 0
        try:
            socket.connect(address)
            await socket.send(b"ping")
            wait = min(PING_TIMEOUT, max(0.0, deadline - time.monotonic()))
            if await socket.poll(int(wait * 1000)):
                await socket.recv()
                return True
        finally:
            socket.close(linger=0)
    return False


async def kernel_ready_seconds(
    session: Session,
    connection_info: KernelConnectionInfo,
    timeout: float,
    log: logging.Logger | logging.LoggerAdapter[Any],
) -> float | None:
    """Wait until the kernel's heartbeat answers; how long after the session was
    RUNNING (0 if before: the kernel starts early); None if it did not answer
    within ``timeout`` (or the kernel's ports are not known)."""
    answered = False
    with contextlib.suppress(KeyError, zmq.ZMQError, asyncio.TimeoutError):
        answered = await heartbeat_answers(connection_info, timeout)
    if not answered:  # the kernel manager reports a kernel that fails
        log.debug("cluster session %s: no kernel_ready timing", session.name)
        return None
    running = timings.elapsed_until_running(session.created_at, session.timings)
    seconds = max(0.0, time.time() - running)
    log.debug("session %s: phase kernel_ready took %.3f s", session.id, seconds)
    return seconds
