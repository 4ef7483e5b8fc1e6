"""Launching a fresh cluster session for a kernel, starting the kernel as early as it can.

Called by :class:`~.provisioner.ClusterProvisioner` when a kernel starts without an
existing session: submits the launch (counted against the REST limit of sessions
per user, unless the shared service counts it), drives it with the kernelspec's
``launch_timeout``, logs its progress, and has the provisioner start the kernel in
main1 as soon as main1 can run it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from ..asyncwait import unless, within
from ..config import local_owner
from ..core.models import Session
from ..core.quota import Quota
from ..core.state import USABLE, ContainerStatus, SessionStatus
from ..engine.api import Engine
from ..errors import LaunchFailed


async def launch_session(
    engine: Engine[Any],
    fields: dict[str, Any],
    timeout: float,
    start_kernel: Callable[[Session], Awaitable[None]],
    submitted: Callable[[Session], None],
    log: logging.Logger | logging.LoggerAdapter[Any],
    *,
    quota: Quota | None,
    early_start: bool,
    stop: asyncio.Event | None = None,
    workdir: str | None = None,
) -> Session:
    """Launch a session of ``fields`` (see ``Engine.make_spec``); it once RUNNING.

    ``submitted`` is told the session as soon as it is recorded; the launch counts
    against ``quota`` (None: the shared service counts it). With ``early_start``
    (the route allows it) and no bootstrap command, ``start_kernel`` is called as soon
    as main1's container runs (its start-up overlaps sshd's and the other
    containers'); with one, once main1 is ready (bootstrap done); without
    ``early_start`` (over SSH) once the whole session is RUNNING. When ``stop`` is
    set (the server stops) while the session is waiting or being brought up, the
    launch is given up: the session is cancelled or removed. Either
    way this returns only when the whole session is RUNNING and the kernel started.
    On any failure (launch error, timeout, cancellation) a kernel start under way
    is cancelled; removing the session is the caller's. ``workdir``: the host folder
    to mount at core.workdir.MOUNT_POINT (decided by the provisioner, never input).
    """
    early: asyncio.Future[None] | None = None
    seen: Session | None = None  # the latest state reported by the launch
    ready_when = ContainerStatus.RUNNING if fields["bootstrap"] else ContainerStatus.STARTING

    def report(s: Session) -> None:
        nonlocal seen, early
        if s.status_reason and (seen is None or s.status_reason != seen.status_reason):
            log.info("cluster session %s %s: %s", s.name, s.status.value, s.status_reason)
        seen = s
        main = s.containers[0]
        if (
            early is None
            and early_start  # over SSH: once work and sshd are ready
            and main.container_id
            and main.status in (ready_when, ContainerStatus.RUNNING)
        ):
            early = asyncio.ensure_future(start_kernel(s))

    try:
        await engine.start()
        spec = engine.make_spec(**fields)
        if workdir is not None:
            spec = replace(spec, workdir=workdir)
        # Kernels from /api/kernels count against the REST limit as well (quota).
        session = await engine.submit(spec, owner=local_owner(), quota=quota)
        submitted(session)
        seen = session
        try:
            driving = within(engine.drive(session.id, on_change=report), timeout)
            session = await _unless_stopped(driving, stop, lambda: seen or session)
        except asyncio.TimeoutError:
            seen = seen or session
            fate = "cancelled" if seen.status is SessionStatus.PENDING else "removed"
            raise LaunchFailed(
                f"cluster session {seen.name} was not ready within "
                f"{timeout:g} s (it was {seen.status.value}: "
                f"{seen.status_reason or 'no reason given'}); it was {fate}. Raise the "
                "kernelspec's launch_timeout or free resources (see `jupyter cluster ls`)"
            ) from None
        if session.status not in USABLE:
            raise LaunchFailed(
                f"cluster session {session.name} is {session.status.value}: "
                f"{session.status_reason or 'no reason given'}"
            )
        if early is None:
            early = asyncio.ensure_future(start_kernel(session))
        await early
        return session
    except BaseException:
        if early is not None and not early.done():
            early.cancel()
        if early is not None:
            await asyncio.gather(early, return_exceptions=True)
        raise


async def _unless_stopped(
    driving: Awaitable[Session], stop: asyncio.Event | None, seen: Callable[[], Session]
) -> Session:
    """Await ``driving``; if ``stop`` is set first, cancel it (the engine then cancels
    or tears the session down) and raise LaunchFailed saying so. Cancelling the caller
    cancels ``driving`` too (see :func:`~jupyter_cluster.asyncwait.unless`)."""
    if stop is None:
        return await driving
    finished, session = await unless(driving, stop.wait())
    if finished and session is not None:
        return session
    last = seen()
    raise LaunchFailed(
        f"the Jupyter server stopped while cluster session {last.name} was "
        f"{last.status.value}; the launch was given up and the session ended"
    )
