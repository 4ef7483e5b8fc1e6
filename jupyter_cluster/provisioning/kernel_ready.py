"""Timing a session's ``kernel_ready`` phase: until its kernel first answers.

Called by :class:`~.provisioner.ClusterProvisioner` (in the background, once per
session) after it started the kernel; the provisioner keeps the result with the
session's other launch timings (see :mod:`jupyter_cluster.core.timings`).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.connect import KernelConnectionInfo

from ..core import timings
from ..core.models import Session


async def kernel_ready_seconds(
    session: Session,
    connection_info: KernelConnectionInfo,
    timeout: float,
    log: logging.Logger | logging.LoggerAdapter[Any],
) -> float | None:
    """Wait until the kernel answers ``kernel_info``; how long after the session was
    RUNNING (0 if before: the kernel starts early); None if it did not answer
    within ``timeout``."""
    client = AsyncKernelClient()
    client.load_connection_info(connection_info)
    try:
        client.start_channels(hb=False)  # no manager here to judge the heartbeat
        await client.wait_for_ready(timeout=timeout)
    except Exception as exc:  # the kernel manager reports a kernel that fails
        log.debug("cluster session %s: no kernel_ready timing: %s", session.name, exc)
        return None
    finally:
        client.stop_channels()
    running = timings.elapsed_until_running(session.created_at, session.timings)
    seconds = max(0.0, time.time() - running)
    log.debug("session %s: phase kernel_ready took %.3f s", session.id, seconds)
    return seconds
