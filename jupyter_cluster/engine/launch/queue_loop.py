"""The scheduling loop: one per engine process, placing the whole waiting queue at once.

:class:`QueueLoop` runs while this process drives waiting sessions (their drivers
enter :meth:`QueueLoop.waiting`) or while a server or the team service keeps it
(:meth:`QueueLoop.start`, one of the engine's upkeep jobs). Each pass asks the
agents about the images waiting sessions need and calls the store's
:meth:`~..store.placing.PlacingStore.place_waiting`, which orders the queue as the
site chose (``ClusterManager.queue_order``) and places every session that fits
in one write transaction, so loops of several processes sharing a store never
double-book an agent. A pass runs when :class:`~..launching.SessionLauncher`
submits (so a launch that fits is placed at once), when this process ends a
session (:meth:`QueueLoop.wake`), and otherwise every ``poll_interval``. Drivers
then only wait for their session's status to change (:func:`.pending.wait_for_room`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass

from ...asyncwait import wait_set
from ...core.scheduler import AgentSlot
from ..store.placing import QueuePass
from ..store.sessions import Store

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class QueuePolicy:
    """How waiting works (ClusterManager's ``pending_*`` and ``queue_order`` settings)."""

    poll_interval: float = 1.0
    timeout: float = 0.0  # 0: wait until cancelled
    backfill: bool = False
    order: str = "fifo"


class QueueLoop:
    """This process's scheduling loop (see the module docstring)."""

    def __init__(
        self,
        store: Store,
        slots: Callable[[str], Awaitable[list[AgentSlot]]],
        policy: Callable[[], QueuePolicy],
    ) -> None:
        """``slots(image)``: the agents as the scheduler sees them for that image;
        ``policy()``: the queue's settings now."""
        self.store = store
        self.slots = slots
        self.policy = policy
        self._waiters = 0
        self._kept = False
        self._task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake = asyncio.Event()
        self._passed = asyncio.Event()

    def _bind(self) -> None:
        """Events of the running event loop (a CLI may run several in turn)."""
        running = asyncio.get_running_loop()
        if self._loop is not running:
            self._loop, self._task = running, None
            self._wake, self._passed = asyncio.Event(), asyncio.Event()

    async def run_pass(self, known: Mapping[str, list[AgentSlot]] | None = None) -> QueuePass:
        """Place the waiting queue once; wakes the drivers waiting for a pass.

        ``known``: agents already asked about an image just now (by ``submit``)."""
        self._bind()
        try:
            images = self.store.waiting_images()
            if not images:
                return QueuePass()
            known = known or {}
            views = {
                image: known[image] if image in known else await self.slots(image)
                for image in sorted(images)
            }
            policy = self.policy()
            done = self.store.place_waiting(
                views, order=policy.order, backfill=policy.backfill, timeout=policy.timeout
            )
            if done.placed or done.cancelled:
                log.debug(
                    "queue pass: placed %d, cancelled %d, %d waiting, %.3f s",
                    len(done.placed),
                    len(done.cancelled),
                    done.waiting,
                    done.seconds,
                )
            return done
        finally:
            self._passed.set()
            self._passed = asyncio.Event()

    async def next_pass(self, timeout: float) -> None:
        """Return after the next pass of this process's loop, or ``timeout`` seconds
        (another process's loop may have placed the session meanwhile)."""
        self._bind()
        await wait_set(self._passed, timeout)

    def wake(self) -> None:
        """Run a pass soon: room may have appeared (a session of this process ended)."""
        with contextlib.suppress(RuntimeError):  # no running event loop: nothing waits
            self._bind()
            self._wake.set()
            self._ensure()

    @contextlib.asynccontextmanager
    async def waiting(self) -> AsyncIterator[None]:
        """Keep the loop running while a driver of this process waits in it."""
        self._bind()
        self._waiters += 1
        self._ensure()
        try:
            yield
        finally:
            self._waiters -= 1
            if not self._waiters:
                self._wake.set()  # so an idle loop ends now, not after its poll interval

    def start(self) -> None:
        """Keep the loop running until :meth:`stop` (a server's or service's upkeep)."""
        self._bind()
        self._kept = True
        self._ensure()

    async def stop(self) -> None:
        """Stop keeping the loop; it ends now unless drivers of this process wait."""
        self._kept = False
        task = self._task
        if task is None or task.done() or self._waiters:
            return
        if task.get_loop() is not asyncio.get_running_loop():  # an earlier event loop's
            self._task = None
            return
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    def _ensure(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        while self._waiters > 0 or self._kept:
            policy = self.policy()
            again = False
            try:
                done = await self.run_pass()
                # Cancelled sessions freed their place: the queue may move now.
                again = bool(done.cancelled) and done.waiting > 0
            except Exception:  # a lost store or agent must not end the loop
                log.exception("placing the waiting queue failed; trying again")
            if not again:
                await wait_set(self._wake, policy.poll_interval)
            self._wake.clear()
