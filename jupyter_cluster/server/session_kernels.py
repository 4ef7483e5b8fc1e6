"""The kernels a server starts in its sessions' main1: their start, state and shutdown.

One :class:`SessionKernels` per :class:`~.service.ClusterService`: a launch through
REST that asks for a kernel has it started here, with the server's own kernel
manager, once its session runs (``waiting`` → ``starting`` → running, or
``failed`` with the reason); a session's model shows that state; a session ended
here or elsewhere has its kernel shut down once, however many callers ask; and
when the server stops, kernels are shut down without their provisioners ending
their sessions.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any

from ..core.models import Session
from ..core.state import FINAL

#: Seconds a shutdown waits for a start or restart the kernel's own manager has
#: under way (its restarter saw the kernel die with its session) before giving up.
BUSY_WAIT = 60.0


class SessionKernels:
    """Kernels in main1 started by this server (see the module docstring)."""

    def __init__(
        self,
        kernel_manager: Callable[[], Any],
        kernel_name: str,
        poke: Callable[[], None],
        log: logging.Logger,
    ) -> None:
        """``kernel_manager``: gives the server's kernel manager; ``kernel_name``: the
        session kernelspec's; ``poke``: tells the events stream something changed."""
        self._kernel_manager = kernel_manager
        self.kernel_name = kernel_name
        self.poke = poke
        self.log = log
        self._phase: dict[str, str] = {}  # waiting / starting / failed
        self._reason: dict[str, str] = {}
        self._shutdowns: dict[str, asyncio.Future[Any]] = {}

    @property
    def manager(self) -> Any:
        """The server's kernel manager."""
        return self._kernel_manager()

    def alive(self, kernel_id: str | None) -> bool:
        """Whether ``kernel_id`` is one of the server's kernels now."""
        return bool(kernel_id) and kernel_id in self.manager

    def get(self, kernel_id: str | None) -> Any:
        """The server's kernel ``kernel_id`` (its kernel manager), or None when it has
        none of that id or no kernels (the shared service); for the idle checks, which
        read its activity."""
        km = self.manager
        return km.get_kernel(kernel_id) if km is not None and self.alive(kernel_id) else None

    def kernel_of(self, session: Session, found: Mapping[str, str] | None = None) -> str | None:
        """The id of the session's kernel: the one recorded with it (a launch through
        REST that asked for a kernel), else a kernel of this server whose provisioner
        runs in the session: a cluster kernelspec's, which launched the session
        itself (jupyter_server chose its id, so the session does not record it).
        ``found``: :meth:`by_session`, when the caller looks up many sessions.
        Used for the session's model (the Lab's notebook toolbar and sidebar find
        the session by it), its termination here and its idle checks."""
        if session.kernel_id:
            return session.kernel_id
        if session.status in FINAL:
            return None
        return (self.by_session() if found is None else found).get(session.id)

    def by_session(self) -> dict[str, str]:
        """The server's kernels by the session their provisioner runs in, from one
        walk over them (empty for the shared service, which has no kernels)."""
        km = self.manager
        if km is None:
            return {}
        found: dict[str, str] = {}
        for kernel_id in km.list_kernel_ids():
            provisioner = getattr(km.get_kernel(kernel_id), "provisioner", None)
            session_id = getattr(provisioner, "session_id", None)
            if isinstance(session_id, str):
                found.setdefault(session_id, str(kernel_id))
        return found

    def waiting(self, session_id: str) -> None:
        """A kernel is to start once the session runs."""
        self._phase[session_id] = "waiting"

    def failed(self, session_id: str, reason: str) -> None:
        """The kernel asked for will not start, because of ``reason``."""
        if session_id in self._phase:
            self._phase[session_id] = "failed"
            self._reason[session_id] = reason

    def forget(self, session_id: str) -> None:
        """The session is gone (or its launch given up): nothing more to show."""
        self._phase.pop(session_id, None)
        self._reason.pop(session_id, None)

    def state(self, session: Session, kernel_id: str | None, here: bool) -> tuple[str | None, str]:
        """(state, reason) of the session's kernel ``kernel_id`` (:meth:`kernel_of`, or
        the recorded one when not ``here``): waiting, starting, running, failed, gone,
        ``remote`` (``here`` False: the owner's server runs it), or None when the
        session has no kernel."""
        if not kernel_id:
            return None, ""
        if not here:
            return "remote", ""
        phase = self._phase.get(session.id)
        if phase in ("waiting", "starting"):
            return phase, ""
        if self.alive(kernel_id):
            return "running", ""
        if phase == "failed":
            return "failed", self._reason.get(session.id, "")
        return "gone", ""

    async def start(self, session: Session, notebook_dir: str | None = None) -> None:
        """Start the session's kernel; in ``notebook_dir`` (of the server's root) when
        given, where the provisioner puts it if the session mounts that folder."""
        self._phase[session.id] = "starting"
        self.poke()
        try:
            await self.manager.start_kernel(
                kernel_id=session.kernel_id,
                kernel_name=self.kernel_name,
                path=notebook_dir,
                cluster_session_id=session.id,
            )
            self._phase.pop(session.id, None)
            self.log.info("kernel %s runs in main1 of %s", session.kernel_id, session.name)
        except Exception as exc:
            self.log.warning("kernel of cluster session %s did not start: %s", session.name, exc)
            self.failed(session.id, f"the kernel did not start: {exc}")
        finally:
            self.poke()

    def keep_session(self, kernel_id: str | None) -> None:
        """Have kernel ``kernel_id`` shut down without its provisioner ending its
        session: the server ends the session itself, or stops (then only for the
        kernels recorded with their sessions: a kernelspec's ends with its session)."""
        if self.alive(kernel_id):
            provisioner = self.manager.get_kernel(kernel_id).provisioner
            if provisioner is not None and hasattr(provisioner, "keep_session"):
                provisioner.keep_session = True

    def forget_failed_starts(self) -> None:
        """jupyter_client keeps a kernel whose start failed among its pending kernels,
        and the server's shutdown_all then fails on it (404: no such kernel), so the
        server would never exit; forget those before it shuts its kernels down
        (their start failed: nothing of them runs)."""
        km = self.manager
        pending = getattr(km, "_pending_kernels", None)
        if not isinstance(pending, dict):
            return
        for kernel_id, task in list(pending.items()):
            if task.done() and kernel_id not in km:
                pending.pop(kernel_id, None)

    async def shut_down(self, kernel_id: str | None) -> None:
        """Shut a kernel down once, however many callers ask at the same time."""
        if not kernel_id:
            return
        task = self._shutdowns.get(kernel_id)
        if task is None:
            if not self.alive(kernel_id):
                return
            task = asyncio.ensure_future(self._shut_down_once_settled(kernel_id))
            self._shutdowns[kernel_id] = task
            task.add_done_callback(lambda _: self._shutdowns.pop(kernel_id, None))
        try:
            await asyncio.shield(task)
        except Exception as exc:
            self.log.warning("shutting down kernel %s: %s", kernel_id, exc)
        self.poke()

    async def _shut_down_once_settled(self, kernel_id: str) -> None:
        """Shut the kernel down, after any start or restart under way.

        When a session ends, its kernel dies, and the kernel's restarter may be
        restarting it just then. jupyter_client cannot shut a kernel down during
        that; it fails with "Exception is not set." and keeps the kernel. So wait
        for the restart to end, then try again.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + BUSY_WAIT
        while True:
            try:
                await self.manager.shutdown_kernel(kernel_id, now=True)
                return
            except asyncio.InvalidStateError:
                if not self.alive(kernel_id):
                    return
                if loop.time() > deadline:
                    raise RuntimeError(
                        f"its start or restart did not end within {BUSY_WAIT:.0f}s"
                    ) from None
            ready = self.manager.get_kernel(kernel_id).ready
            while not ready.done() and loop.time() <= deadline:
                await asyncio.sleep(0.05)
