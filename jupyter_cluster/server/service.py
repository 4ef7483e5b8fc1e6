"""What the REST handlers share: launches in the background, kernels, events, terminals.

One :class:`ClusterService` per server, made by
:class:`~jupyter_cluster.server.app.ClusterApp` around its one engine. A launch
returns at once (``submit``); a background task drives the session
(PENDING → PREPARING → RUNNING, visible through GET and the events stream) and,
when asked, then starts the session's kernel in main1 with the server's own
kernel manager (a :class:`~jupyter_cluster.provisioning.provisioner.ClusterProvisioner`
attached to the session), so ``/api/kernels/{id}`` and every front end can use it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..asyncwait import within
from ..core.launch_check import LaunchCheck
from ..core.models import Session
from ..core.state import USABLE, SessionStatus
from ..engine.api import Upkeep
from ..errors import ClusterError, InvalidRequest, NotFound
from ..paths import cluster_dir
from ..provisioning.endings import server_started, server_stopping, wait_for_endings
from ..reach.apps import AppTunnels
from . import audit
from .events import Event, EventHub, is_ended
from .idle import IdleWatcher
from .notebook_dir import host_root_to_mount, take_notebook_dir
from .service_host import ServiceHost
from .session_kernels import SessionKernels
from .streams import StreamSlots
from .terminals import ClusterTerminals

#: The key of the web app's settings under which handlers find the service.
SERVICE_SETTING = "jupyter_cluster_service"


class ClusterService:
    """Runtime state of the extension (see the module docstring)."""

    def __init__(self, host: ServiceHost) -> None:
        server_started()
        self.host = host
        self.engine = host.engine
        self.gate = host.gate
        self.log: logging.Logger = host.log
        self.hub = EventHub(
            self.engine.store, self.models, interval=host.events_poll_interval, log=self.log
        )
        self.hub.listeners.append(self._on_event)
        ssh_dir = os.path.join(cluster_dir(), "ssh")
        self.terminals = ClusterTerminals(self.engine, ssh_dir, self.log)
        #: Ports in main1 reached over SSH by the app proxy (``cluster/proxy/…``).
        self.apps = AppTunnels(self.engine.access)
        #: Live log and stats streams, per user (see :mod:`.streams`).
        self.streams = StreamSlots(host.max_streams_per_user, host.max_streams)
        self._launches: dict[str, asyncio.Task[None]] = {}
        #: Kernels this server starts in its sessions' main1 (see :mod:`.session_kernels`).
        self.kernels = SessionKernels(
            lambda: self.host.kernel_manager, host.kernel_name, self.hub.poke, self.log
        )
        self._housekeeping: set[asyncio.Task[None]] = set()
        self._started: asyncio.Future[None] | None = None
        self.idle = IdleWatcher(self, host.idle_timeout, host.idle_check_interval)
        self._refresh: asyncio.Task[None] | None = None
        #: The engine's background jobs (a local engine's warm pool and OOM watch).
        self.upkeep: list[Upkeep] = []

    # -- server objects --------------------------------------------------------------

    @property
    def active_streams(self) -> int:
        """Live log and stats streams being served now."""
        return self.streams.active

    @property
    def kernel_manager(self) -> Any:
        """The server's kernel manager."""
        return self.host.kernel_manager

    @property
    def terminal_manager(self) -> Any:
        """The server's terminal manager (None when terminals are disabled)."""
        return self.host.terminal_manager

    # -- start and stop ----------------------------------------------------------------

    async def ensure_started(self) -> None:
        """Reconcile once and start the event poller (idempotent, concurrency-safe)."""
        if self._started is None:
            self._started = asyncio.ensure_future(self._start())
        await asyncio.shield(self._started)

    async def _start(self) -> None:
        try:
            await self.engine.start()
        except Exception:
            self.log.exception("jupyter-cluster: start-up reconciliation failed")
        try:
            active = await asyncio.to_thread(self.engine.store.list)
            self.terminals.sweep({s.id for s in active})
        except ClusterError as exc:  # the shared service is not up yet
            self.log.warning("jupyter-cluster: %s", exc)
        self.hub.start()
        if self.host.idle_timeout > 0:
            self.idle.start()
        if self.host.reconcile_interval > 0:
            self._refresh = asyncio.ensure_future(self._refresh_loop())
        self.upkeep = list(self.engine.upkeep(self.hub.poke))
        for job in self.upkeep:
            job.start()

    async def _refresh_loop(self) -> None:
        while True:
            await asyncio.sleep(self.host.reconcile_interval)
            try:
                await self.engine.refresh()
            except Exception:
                self.log.exception("jupyter-cluster: reconciliation failed")
            self.hub.poke()

    async def stop_upkeep(self) -> None:
        """Stop the engine's background jobs (server stop): the warm pool is removed."""
        jobs, self.upkeep = self.upkeep, []
        for job in jobs:
            await job.stop()

    async def stop(self) -> None:
        """Server stop: kernel launches in progress are cancelled and the sessions of
        kernels started through ``/api/kernels`` end with their kernels, in the
        foreground (see provisioning.endings); launches driven here end; sessions
        launched through this API (not their kernels) survive."""
        await server_stopping()
        self.kernels.forget_failed_starts()
        if self._refresh is not None:
            self._refresh.cancel()
            await asyncio.gather(self._refresh, return_exceptions=True)
        await self.stop_upkeep()
        await self.hub.stop()
        await self.idle.stop()
        for session_id, task in list(self._launches.items()):
            await self._settle(session_id, task, 30.0)
        await wait_for_endings()
        tasks = list(self._housekeeping)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        with contextlib.suppress(ClusterError):
            for session in await asyncio.to_thread(self.engine.store.list):
                self.kernels.keep_session(session.kernel_id)
        await self.terminals.close_all(self.terminal_manager)
        await self.apps.close_all()
        await audit.flushed()  # the audit log is in the store closed next
        await self.engine.close()

    # -- models --------------------------------------------------------------------------

    def models(self, sessions: Iterable[Session]) -> list[dict[str, Any]]:
        """:meth:`model` of each of ``sessions``, the server's kernels walked once."""
        found = self.kernels.by_session() if self.host.kernels_here else {}
        return [self.model(s, found) for s in sessions]

    def model(self, session: Session, found: Mapping[str, str] | None = None) -> dict[str, Any]:
        """The REST shape of a session: the engine's plus the kernel's state
        (``found``: the server's kernels by session, see :meth:`models`)."""
        here = self.host.kernels_here
        kernel_id = self.kernels.kernel_of(session, found) if here else session.kernel_id
        state, reason = self.kernels.state(session, kernel_id, here)
        deadline = self.idle.deadline(session, kernel_id) if self.host.idle_timeout > 0 else None
        return {
            **session.to_dict(),
            "kernel_id": kernel_id,
            "kernel_state": state,
            "kernel_reason": reason,
            "idle_deadline": deadline,
        }

    # -- launching -------------------------------------------------------------------------

    async def launch(self, body: Any, owner: str, groups: Sequence[str] = ()) -> Session:
        """Check and submit a launch (a ``profile`` among those visible to the owner's
        Hub ``groups``); drive it (and start its kernel) in the background."""
        body, notebook_dir = take_notebook_dir(body)
        spec, start_kernel, quota = self.gate.admit(body, owner, groups)
        start_here = start_kernel and self.host.kernels_here
        if start_here and notebook_dir is not None:
            root = self.kernel_manager.root_dir
            mount = host_root_to_mount(
                self.engine, root, notebook_dir, self.host.mount_notebook_dir
            )
            spec = replace(spec, workdir=mount) if mount else spec
        try:  # the store checks the quota in the transaction that inserts the session
            session = await self.engine.submit(spec, owner=owner, quota=quota, kernel=start_kernel)
        except NotFound as exc:  # a data folder removed meanwhile
            raise InvalidRequest(str(exc), "mounts") from exc
        if start_here:
            self.kernels.waiting(session.id)
        task = asyncio.ensure_future(self._drive(session.id, start_here, notebook_dir))
        self._launches[session.id] = task
        task.add_done_callback(lambda _: self._launches.pop(session.id, None))
        self.hub.poke()
        return session

    async def check(self, body: Any, owner: str, groups: Sequence[str] = ()) -> LaunchCheck:
        """A dry run of :meth:`launch` (``POST sessions?dry_run=1``): the same checks
        and refusals, then whether it would start now and where, or why it would
        wait; nothing is made or stored."""
        body, _ = take_notebook_dir(body)
        spec, _, quota = self.gate.admit(body, owner, groups)
        try:
            return await self.engine.check(spec, owner=owner, quota=quota)
        except NotFound as exc:  # a data folder the owner lacks: the field's error
            raise InvalidRequest(str(exc), "mounts") from exc

    async def _drive(
        self, session_id: str, start_kernel: bool, notebook_dir: str | None = None
    ) -> None:
        try:
            session = await self.engine.drive(session_id, on_change=lambda s: self.hub.poke())
        except asyncio.CancelledError:
            self.kernels.forget(session_id)
            raise
        except ClusterError as exc:
            self.log.warning("cluster session %s: %s", session_id, exc)
            self.kernels.failed(session_id, f"the session did not start: {exc}")
            return
        finally:
            self.hub.poke()
        if not start_kernel:
            return
        if session.status not in USABLE:
            self.kernels.failed(session_id, f"the session is {session.status.value}")
            return
        await self.kernels.start(session, notebook_dir)

    async def launch_options(self, owner: str | None = None, groups: Sequence[str] = ()) -> Any:
        """The launch form's description: this server's policy, or the service's."""
        return await self.gate.options(owner, groups)

    # -- ending ------------------------------------------------------------------------------

    async def terminate(self, ref: str, reason: str = "") -> Session:
        """Stop a launch driven here, shut the kernel down, terminate or cancel the
        session (``reason`` says why in its history)."""
        session = await self.engine.get(ref)
        task = self._launches.get(session.id)
        if task is not None:
            await self._settle(session.id, task, 60.0, reason)
        session = await self.engine.get(session.id)
        kernel_id = self.kernels.kernel_of(session)
        self.kernels.keep_session(kernel_id)  # the session is ended here, with its reason
        await self.kernels.shut_down(kernel_id)
        session = await self.engine.terminate(session.id, reason=reason)
        self.kernels.forget(session.id)
        await self.terminals.close_session(self.terminal_manager, session.id)
        self.hub.poke()
        return session

    async def _settle(
        self, session_id: str, task: asyncio.Task[None], timeout: float, reason: str = ""
    ) -> None:
        """End a launch driven here before its session is terminated.

        A PENDING one is cancelled (it has made nothing yet). One being brought up
        is terminated first; its launch then stops by itself and removes what it
        made (cancelling Docker calls in flight could leave a network behind); a
        kernel being started is let start. Both wait at most ``timeout``. Either
        way the session keeps ``reason`` (e.g. an admin's, which its owner reads).
        """
        if task.done():
            return
        session = await asyncio.to_thread(self.engine.store.get, session_id)
        if session is None or session.status is SessionStatus.PENDING:
            if session is not None and reason:  # CANCELLED with the reason, then stop
                with contextlib.suppress(ClusterError):
                    await self.engine.terminate(session_id, reason=reason)
            task.cancel()
        else:
            if session.status is SessionStatus.PREPARING:
                with contextlib.suppress(ClusterError):
                    await self.engine.terminate(session_id, reason=reason)
            with contextlib.suppress(Exception, asyncio.TimeoutError):
                await within(asyncio.shield(task), timeout)
            task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    def _on_event(self, event: Event) -> None:
        """A session ended (maybe elsewhere, e.g. ``jupyter cluster rm``): clean up here."""
        if is_ended(event):
            task = asyncio.ensure_future(self._after_end(event["session"]))
            self._housekeeping.add(task)
            task.add_done_callback(self._housekeeping.discard)

    async def _after_end(self, model: dict[str, Any]) -> None:
        session_id, kernel_id = model["id"], model.get("kernel_id")
        await self.terminals.close_session(self.terminal_manager, session_id)
        await self.apps.close_session(session_id)
        if session_id not in self._launches:
            await self.kernels.shut_down(kernel_id)
