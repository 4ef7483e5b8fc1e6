"""Session and container status changes, as a stream for ``GET cluster/api/events``.

Sessions change from other processes too (the CLI, a detached launch driver, a
kernel provisioner), so changes are found by polling the shared store: every
``interval`` seconds (or at once after :meth:`EventHub.poke`) the hub reads the
active sessions, compares each one's public model with the previous poll and
publishes the differences. The REST events handler subscribes to it; the server
extension listens to it to clean up after sessions that ended.

Events are dicts: ``{"type": "session", "session": <model>, "previous_status": …}``
when a session's status, reason or kernel changes (or it first appears), and
``{"type": "container", "session_id": …, "host": …, "status": …,
"previous_status": …, "status_reason": …, "container_id": …}`` per container.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

from ..asyncwait import stopped, wait_set
from ..core.models import Session
from ..core.state import ENDED, FINAL, SessionStatus
from ..engine.api import SessionReads

Event = dict[str, Any]
Listener = Callable[[Event], None]
#: A subscriber that falls this far behind is dropped (its stream ends).
MAX_BACKLOG = 1000
_FINAL = {s.value for s in FINAL}


def _session_key(model: dict[str, Any]) -> tuple[Any, ...]:
    return (
        model["status"],
        model["status_reason"],
        model.get("kernel_id"),
        model.get("kernel_state"),
        model.get("kernel_reason"),
    )


def _container_key(container: dict[str, Any]) -> tuple[Any, ...]:
    return (container["status"], container["status_reason"], container["container_id"])


def diff(old: dict[str, Any] | None, new: dict[str, Any]) -> list[Event]:
    """The events that turn session model ``old`` (None: unseen) into ``new``."""
    events: list[Event] = []
    if old is None or _session_key(old) != _session_key(new):
        events.append(
            {
                "type": "session",
                "session_id": new["id"],
                "owner": new["owner"],
                "status": new["status"],
                "previous_status": old["status"] if old else None,
                "session": new,
            }
        )
    before = {c["host"]: c for c in (old or {}).get("containers", ())}
    for container in new["containers"]:
        prior = before.get(container["host"])
        if prior is None or _container_key(prior) != _container_key(container):
            events.append(
                {
                    "type": "container",
                    "session_id": new["id"],
                    "owner": new["owner"],
                    "session_name": new["name"],
                    "host": container["host"],
                    "status": container["status"],
                    "previous_status": prior["status"] if prior else None,
                    "status_reason": container["status_reason"],
                    "container_id": container["container_id"],
                    "agent": container["agent"],
                }
            )
    return events


class Subscription:
    """One consumer's queue of events; ``None`` in it means the stream is over."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[Event | None] = asyncio.Queue()

    def close(self) -> None:
        self.queue.put_nowait(None)


class EventHub:
    """Poll the store, turn changes into events, hand them to subscribers and listeners."""

    def __init__(
        self,
        store: SessionReads,
        models: Callable[[Iterable[Session]], list[dict[str, Any]]],
        *,
        interval: float = 0.5,
        log: logging.Logger | None = None,
    ) -> None:
        self.store = store
        self.models = models
        self.interval = interval
        self.log = log or logging.getLogger(__name__)
        self.listeners: list[Listener] = []
        self._subscribers: set[Subscription] = set()
        self._last: dict[str, dict[str, Any]] = {}
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._seq = 0

    # -- consumers ---------------------------------------------------------------

    def subscribe(self) -> Subscription:
        sub = Subscription()
        self._subscribers.add(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        self._subscribers.discard(sub)

    @property
    def subscriber_count(self) -> int:
        return len(self._subscribers)

    def current(self) -> list[dict[str, Any]]:
        """The session models of the last poll that are still active (for snapshots)."""
        return [m for m in self._last.values() if m["status"] not in _FINAL]

    def publish(self, event: Event) -> None:
        """Number ``event``, then give it to every listener and subscriber."""
        self._seq += 1
        event = {"id": self._seq, "time": time.time(), **event}
        for listener in list(self.listeners):
            try:
                listener(event)
            except Exception:
                self.log.exception("jupyter-cluster event listener failed")
        for sub in list(self._subscribers):
            if sub.queue.qsize() >= MAX_BACKLOG:
                self.log.warning("dropping a cluster events client that fell behind")
                self._subscribers.discard(sub)
                sub.close()
            else:
                sub.queue.put_nowait(event)

    # -- polling -----------------------------------------------------------------

    def _read(self, known: set[str]) -> dict[str, Session]:
        """Active sessions, plus those of ``known`` that are no longer active."""
        sessions = {s.id: s for s in self.store.list()}
        for session_id in known - sessions.keys():
            ended = self.store.get(session_id)
            if ended is not None:
                sessions[session_id] = ended
        return sessions

    async def poll(self) -> None:
        """Compare the store with the previous poll and publish the differences.

        The store is read in a worker thread: another process holding its write
        lock must not stall the server.
        """
        sessions = await asyncio.to_thread(self._read, set(self._last))
        models = dict(zip(sessions, self.models(sessions.values()), strict=True))
        for sid, model in models.items():
            for event in diff(self._last.get(sid), model):
                self.publish(event)
        self._last = {sid: m for sid, m in models.items() if m["status"] not in _FINAL}

    def poke(self) -> None:
        """Poll now rather than at the next tick (after a change made here)."""
        self._wake.set()

    async def _run(self) -> None:
        while True:
            try:
                await self.poll()
            except Exception:
                self.log.exception("jupyter-cluster: polling the session store failed")
            self._wake.clear()
            await wait_set(self._wake, self.interval)

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        """Stop polling and end every subscriber's stream."""
        if self._task is not None:
            task, self._task = self._task, None
            await stopped(task)
        for sub in list(self._subscribers):
            sub.close()
        self._subscribers.clear()


def is_ended(event: Event) -> bool:
    """Whether ``event`` says a session reached an end (one of :data:`ENDED`)."""
    return event["type"] == "session" and SessionStatus(event["status"]) in ENDED
