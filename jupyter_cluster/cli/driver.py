"""Detached driver of a ``launch --no-wait``: waits for room, brings the session up.

Started by the CLI as ``python -m jupyter_cluster.cli.driver SESSION_ID`` in its own
process group, so the session keeps progressing (PENDING → PREPARING → RUNNING)
after the CLI has returned. Its output goes to a log file in the cluster dir.
"""

from __future__ import annotations

import asyncio
import logging
import sys

from ..config import make_engine
from ..errors import ClusterError


async def drive(session_id: str) -> int:
    """Drive one session to RUNNING, ERROR or CANCELLED; returns an exit code."""
    engine = make_engine()
    try:
        session = await engine.drive(session_id)
        print(f"session {session_id}: {session.status.value}", flush=True)
        return 0
    except ClusterError as exc:
        print(f"session {session_id}: {exc}", flush=True)
        return 1
    finally:
        await engine.close()


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    sys.exit(asyncio.run(drive(sys.argv[1])))
