"""Ending a cluster kernel: polling and signalling it in main1, its shutdown, and
the end of its session (at once, or in the background for a server's kernels).

The part of :class:`~.provisioner.ClusterProvisioner` that jupyter_client calls from
``shutdown_kernel``, ``interrupt_kernel`` and ``is_alive``; the session's removal
itself is :mod:`.endings`'.
"""

from __future__ import annotations

import asyncio
import signal
from functools import partial
from typing import Any

from traitlets import Bool

from ..engine.api import Engine
from .endings import (
    end_session,
    in_background,
    kernel_ended,
    removing_subs,
    stopping,
)
from .kernel_death import death_note
from .provisioner_base import ProvisionerBase

#: Seconds each poll may wait for the kernel to end once its shutdown was requested:
#: more than jupyter_client's 0.1 s between polls, so the end is never missed until
#: the next one, and well under its wait before it sends SIGTERM.
SHUTDOWN_POLL = 1.0


class KernelEnding(ProvisionerBase):
    """Poll, signal and end the kernel; end its session with it."""

    end_session_in_background = Bool(
        False,
        config=True,
        help="Let shutdown_kernel return once the kernel was asked to end and its "
        "session is TERMINATING; the kernel's own exit (within the kernel manager's "
        "shutdown_wait_time) and removing the containers and network go on in the "
        "background (a restart still waits for the kernel's exit). The "
        "server extension turns this on for its kernels (it keeps running, waits for "
        "these removals when it stops, and its reconciliation finishes any that were "
        "cut short); off by default, since a script's event loop may end first.",
    )

    async def post_launch(self, **kwargs: Any) -> None:
        """Ask the kernel manager to say when it gives the kernel up (see :meth:`_dead`)."""
        await super().post_launch(**kwargs)
        if not self._hears_death and self.parent is not None:
            self.parent.add_restart_callback(self._dead, "dead")
            self._hears_death = self.parent._restarter is not None

    def _dead(self) -> None:
        """The kernel died and its manager gave up restarting it: a server then drops
        the kernel without shutting it down (a local kernel's process is gone by then),
        so its session is ended here."""
        if self.session_id is not None:
            self.log.warning("the kernel died for good: ending cluster session %s", self.session_id)
            in_background(self.cleanup(restart=False))

    async def shutdown_requested(self, restart: bool = False) -> None:
        """The kernel manager asked the kernel to end: from now on :meth:`poll`
        answers its end as it happens (see :data:`SHUTDOWN_POLL`), or at once when
        it need not be waited for (:meth:`_ends_in_background`)."""
        self._ending = "restart" if restart else "end"
        await self._here()
        if self._early is None and self._ends_for_good() and not self._ends_in_background():
            # The kernel's own exit takes a while: remove the other containers meanwhile.
            assert self.session_id is not None
            self._early = removing_subs(self.engine, self.session_id)

    def _ends_for_good(self) -> bool:
        """Whether the kernel was asked to end with its session (not a restart, and
        not a stopping server's kernel whose session stays)."""
        return self._ending == "end" and not self.keep_session and self.session_id is not None

    def _ends_in_background(self) -> bool:
        """Whether the kernel, asked to end for good, ends with its session in the
        background (a server's kernels, ``end_session_in_background``, unless the
        server stops): shutdown_kernel then returns without waiting for the kernel's
        own exit, which the background ending awaits before removing the containers
        (see :func:`~.endings.kernel_ended`)."""
        return self._ends_for_good() and self.end_session_in_background and not stopping()

    async def poll(self) -> int | None:
        """``KernelManager.is_alive``: None while the kernel runs, else its exit code.

        Once a shutdown was requested, jupyter_client polls every 0.1 s until the
        kernel has ended; each poll then waits up to :data:`SHUTDOWN_POLL` for the
        kernel's ``docker exec`` to end, so its end is seen at once, not at the next
        poll (the wait is cut short, never the kernel, when the manager gives up).
        A kernel that ends in the background counts as ended (code 0 if still exiting).
        """
        process = await self._handle()
        if process is None:
            return None
        if self._ends_in_background():
            code = await process.poll()
            return 0 if code is None else code
        code = await process.poll(SHUTDOWN_POLL if self._ending else 0.0)
        if code is not None and not self._ending and self._death_of is not process:
            self._death_of = process
            if self._link_ is not None:
                await self._link_.kernel_died()
            await self._tell_death(code)
        return code

    async def _tell_death(self, code: int) -> None:
        """The kernel ended without being asked to (it failed at start, crashed, was
        killed): say why in the log, and keep it as its session's end reason."""
        if self.session_id is None:
            return
        self._death = await death_note(self.engine, self.session_id, self.kernel_id, code)
        self.log.warning(
            "cluster kernel %s of session %s ended: %s",
            self.kernel_id,
            self.session_id,
            self._death,
        )

    async def wait(self) -> int | None:
        """Wait for the kernel process to end (shutdown); its exit code (at once for
        a kernel that ends in the background, see :meth:`poll`)."""
        process = await self._handle()
        if process is None:
            return 0
        if self._ends_in_background():
            return await self.poll()
        return await process.wait()

    async def send_signal(self, signum: int) -> None:
        """``KernelManager.signal_kernel`` / interrupt: signal the kernel in main1."""
        process = await self._handle()
        if process is not None:
            await process.signal(signum)

    async def kill(self, restart: bool = False) -> None:
        """SIGKILL the kernel process (the containers stay until cleanup)."""
        await self.send_signal(signal.SIGKILL)

    async def terminate(self, restart: bool = False) -> None:
        """SIGTERM the kernel process (the containers stay until cleanup)."""
        await self.send_signal(signal.SIGTERM)

    async def cleanup(self, restart: bool = False) -> None:
        """Forget the kernel process; unless restarting, terminate the whole session."""
        await self._here()
        self._moved = False
        background = self._ends_in_background()
        self._ending = ""
        early, self._early = self._early, None
        if self._ready_task is not None:  # a restart before the first answer, too
            self._ready_task.cancel()
            await asyncio.gather(self._ready_task, return_exceptions=True)
            self._ready_task = None
        process, self._process = self._process, None
        if restart:
            self._death = ""  # the new kernel's end is its own
            if process is not None:
                await process.close()
            return
        link, self._link_ = self._link_, None
        grace = float(getattr(self.parent, "shutdown_wait_time", 5.0))
        ended = partial(kernel_ended, process if background else None, link, grace)
        if not background and process is not None:
            await process.close()
        session_id, self.session_id = self.session_id, None
        engine, self._engine = self._engine, None
        if session_id is None or self.keep_session:
            await ended()
            if engine is not None:
                await engine.close()
            return
        engine = engine or self._engine_for_cleanup()
        try:  # removes main1 while the early removal of the others ends (it waits for it)
            await end_session(
                engine, session_id, self.end_session_in_background, ended, reason=self._death
            )
        finally:
            if early is not None and early.get_loop() is asyncio.get_running_loop():
                await early

    def _engine_for_cleanup(self) -> Engine[Any]:
        """The engine, made now if this provisioner never needed it (then closed by
        :func:`~.endings.end_session`)."""
        engine = self.engine
        self._engine = None
        return engine

    def get_shutdown_wait_time(self, recommended: float = 5.0) -> float:
        """Seconds the kernel manager waits for a graceful shutdown (its default)."""
        return recommended
