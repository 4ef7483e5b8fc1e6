"""Detached driver of a ``launch --no-wait`` or a batch launch: brings the session up
and, for a batch session, runs its job until the session ends.

Started by the CLI as ``python -m jupyter_cluster.cli.driver SESSION_ID`` in its own
process group, so the session keeps progressing (PENDING → PREPARING → RUNNING,
then the job) after the CLI has returned or was killed. ``wait`` starts one again
for a batch session whose driver is gone; it picks the job up where it is
(:mod:`jupyter_cluster.engine.batch`). Its output goes to a log file in the cluster dir.
"""

from __future__ import annotations

import asyncio
import logging
import sys

from ..config import make_engine
from ..core.state import SETTLING, USABLE
from ..engine.manager import ClusterManager
from ..errors import ClusterError


async def drive(session_id: str) -> int:
    """Drive one session to RUNNING, ERROR or CANCELLED (a batch session: until it
    ends); returns an exit code."""
    engine = make_engine()
    try:
        session = await engine.get(session_id)
        if session.status in SETTLING:
            session = await engine.drive(session_id)
            print(f"session {session_id}: {session.status.value}", flush=True)
        if session.spec.command and session.status in USABLE and isinstance(engine, ClusterManager):
            session = await engine.run_job(session_id)
            print(f"session {session_id}: {session.status_reason}", flush=True)
        return 0
    except ClusterError as exc:
        print(f"session {session_id}: {exc}", flush=True)
        return 1
    finally:
        await engine.close()


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    sys.exit(asyncio.run(drive(sys.argv[1])))
