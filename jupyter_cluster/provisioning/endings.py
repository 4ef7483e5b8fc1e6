"""Ending the session of a kernel that was shut down, now or in the background; and what
a stopping server does about kernels still launching or ending.

Called by :meth:`~.provisioner.ClusterProvisioner.cleanup` (:func:`end_session`)
and around a launch (:func:`launching`). With the provisioner's
``end_session_in_background`` (the server extension's kernels), shutting a kernel
down returns once its session is TERMINATING and the containers and network are
removed in the background.

When the server stops, the extension calls :func:`server_stopping` before the
server shuts its kernels down: launches in progress are cancelled (their sessions
cancelled or removed), endings under way are awaited, and from then on sessions
are ended in the foreground, within ``shutdown_kernel``, since the server's loop
is about to end. jupyter_server's synchronous ``MappingKernelManager`` runs
provisioners on an event loop of its own, in another thread; the tasks here are
therefore awaited on the loop they belong to.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..asyncwait import within
from ..engine.api import Engine
from .kernel_link import KernelLink
from .process import KernelProcess

#: Sessions being ended in the background (``end_session_in_background``).
ENDING: set[asyncio.Task[None]] = set()


@dataclass(eq=False)
class Launch:
    """A kernel launch in progress: its task, and the event that stops it."""

    task: asyncio.Task[Any]
    stop: asyncio.Event = field(default_factory=asyncio.Event)


#: Kernel launches in progress.
LAUNCHING: set[Launch] = set()
#: Seconds a stopping server waits for given-up launches to end their sessions.
GIVE_UP_TIMEOUT = 60.0
#: Set once the server stops: its kernels' sessions end in the foreground (a
#: script's always do: its provisioners have no background endings).
_stopping = False


#: The kernel's own end, awaited before its session's containers are removed.
Before = Callable[[], Awaitable[None]]


def stopping() -> bool:
    """Whether the server stops (sessions then end in the foreground)."""
    return _stopping


async def kernel_ended(
    process: KernelProcess | None, link: KernelLink | None, grace: float
) -> None:
    """Let the kernel end by itself (it was asked to: ``grace`` seconds at most; then
    removing its container ends it), then close its handle and link (kept open until
    then: the link carries the shutdown request to it). Called before its session's
    containers are removed, in the background when ``shutdown_kernel`` returned
    without waiting for the kernel's end (see the provisioner's ``poll``)."""
    try:
        if process is not None and await process.poll() is None:
            with contextlib.suppress(asyncio.TimeoutError):
                await within(process.wait(), grace)
    finally:
        if process is not None:
            await process.close()
        if link is not None:
            await link.close()


async def _end(
    engine: Engine[Any], session_id: str, before: Before | None = None, reason: str = ""
) -> None:
    """Remove a TERMINATING session's containers (after ``before``: the kernel's end),
    saying ``reason``; then close the provisioner's engine."""
    try:
        if before is not None:
            await before()
        await engine.terminate(session_id, reason)
    except Exception:  # the server's reconciliation finishes TERMINATING sessions
        logging.getLogger(__name__).exception("ending cluster session %s failed", session_id)
    finally:
        await engine.close()


async def end_session(
    engine: Engine[Any],
    session_id: str,
    background: bool,
    before: Before | None = None,
    reason: str = "",
) -> None:
    """Terminate ``session_id`` once ``before`` (the kernel's end, if given) is done,
    saying ``reason`` (e.g. why its kernel died; "" for the usual), then close
    ``engine`` (the provisioner's own).

    With ``background``, and an engine that can mark it (a local one), the session
    is only marked TERMINATING here; the rest (``before`` included) goes on in the
    background (see :data:`ENDING`), which closes the engine when done. Not once
    the server stops.
    """
    closing: Engine[Any] | None = engine
    try:
        if background and not _stopping and engine.mark_ending(session_id):
            in_background(_end(engine, session_id, before, reason))
            closing = None  # _end closes it
        else:
            if before is not None:
                await before()
            await engine.terminate(session_id, reason)
    finally:
        if closing is not None:
            await closing.close()


def removing_subs(engine: Engine[Any], session_id: str) -> asyncio.Task[None]:
    """Start removing the session's containers but main1 while main1's kernel exits
    (``Engine.remove_subs``); called when a kernel whose end is waited for (a
    script's) is asked to end for good. :func:`end_session` removes the rest once
    the task is done; a failure here only leaves more for it."""

    async def remove() -> None:
        try:
            await engine.remove_subs(session_id)
        except Exception:
            logging.getLogger(__name__).exception("ending session %s early failed", session_id)

    return asyncio.ensure_future(remove())


def in_background(ending: Coroutine[Any, Any, None]) -> None:
    """Run ``ending`` (a provisioner's cleanup) in the background, as one of
    :data:`ENDING` (a stopping server waits for it)."""
    task = asyncio.ensure_future(ending)
    ENDING.add(task)
    task.add_done_callback(ENDING.discard)


@contextlib.contextmanager
def launching() -> Iterator[asyncio.Event | None]:
    """Register the current task as a kernel launch that a stopping server gives up
    (the event it yields is set then)."""
    task = asyncio.current_task()
    if task is None:
        yield None
        return
    launch = Launch(task)
    LAUNCHING.add(launch)
    try:
        yield launch.stop
    finally:
        LAUNCHING.discard(launch)


async def _settle(tasks: set[asyncio.Task[Any]], cancel: bool) -> None:
    """Cancel (if asked) and await ``tasks``, each on its own event loop."""
    here = asyncio.get_running_loop()
    by_loop: dict[asyncio.AbstractEventLoop, list[asyncio.Task[Any]]] = {}
    for task in list(tasks):
        by_loop.setdefault(task.get_loop(), []).append(task)
    for loop, group in by_loop.items():

        async def finish(group: list[asyncio.Task[Any]] = group) -> None:
            if cancel:
                for task in group:
                    task.cancel()
            await asyncio.gather(*group, return_exceptions=True)

        if loop is here:
            await finish()
        elif loop.is_running():
            with contextlib.suppress(Exception):
                await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(finish(), loop))


async def wait_for_endings() -> None:
    """Wait for the sessions being ended in the background (the server, as it stops)."""
    while ENDING:
        await _settle(ENDING, cancel=False)


def server_started() -> None:
    """A server (the extension) is made: sessions may end in the background again
    (a process may run one server after another, as tests do)."""
    global _stopping
    _stopping = False


async def server_stopping() -> None:
    """The server stops: give up kernel launches in progress (their sessions are
    cancelled or removed), wait for endings under way, end later ones in the
    foreground."""
    global _stopping
    _stopping = True
    launches = list(LAUNCHING)
    for launch in launches:
        launch.task.get_loop().call_soon_threadsafe(launch.stop.set)
    with contextlib.suppress(asyncio.TimeoutError):
        await within(_settle({x.task for x in launches}, cancel=False), GIVE_UP_TIMEOUT)
    await wait_for_endings()
