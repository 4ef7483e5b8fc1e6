"""Ending the session of a kernel that was shut down, now or in the background.

Called by :meth:`~.provisioner.ClusterProvisioner.cleanup` (:func:`end_session`).
With the provisioner's ``end_session_in_background`` (the server extension's
kernels), shutting a kernel down returns once its session is TERMINATING and the
containers and network are removed in the background; the server extension calls
:func:`wait_for_endings` as it stops, so those removals finish.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from ..engine.api import Engine

#: Sessions being ended in the background (``end_session_in_background``).
ENDING: set[asyncio.Future[None]] = set()


async def _end(engine: Engine[Any], session_id: str) -> None:
    """Remove a TERMINATING session's containers; then close the provisioner's engine."""
    try:
        await engine.terminate(session_id)
    except Exception:  # the server's reconciliation finishes TERMINATING sessions
        logging.getLogger(__name__).exception("ending cluster session %s failed", session_id)
    finally:
        await engine.close()


async def wait_for_endings() -> None:
    """Wait for the sessions being ended in the background (the server, as it stops)."""
    while ENDING:
        await asyncio.gather(*list(ENDING), return_exceptions=True)


async def end_session(engine: Engine[Any], session_id: str, background: bool) -> None:
    """Terminate ``session_id``, then close ``engine`` (the provisioner's own).

    With ``background``, and an engine that can mark it (a local one), the session
    is only marked TERMINATING here; its removal goes on in the background (see
    :data:`ENDING`), which closes the engine when done.
    """
    closing: Engine[Any] | None = engine
    try:
        if background and engine.mark_ending(session_id):
            ending = asyncio.ensure_future(_end(engine, session_id))
            ENDING.add(ending)
            ending.add_done_callback(ENDING.discard)
            closing = None  # _end closes it
        else:
            await engine.terminate(session_id)
    finally:
        if closing is not None:
            await closing.close()
