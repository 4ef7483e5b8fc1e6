"""Container logs that outlive their containers: kept when a session ends, read after.

When a session is terminated or its launch fails, the manager copies the tail of
each container's log (at most ``log_keep_lines`` lines and ``log_keep_size`` bytes
per container) into ``<store dir>/logs/<session id>/<host>.log`` (a 0700
directory, 0600 files) just before the containers are removed; ``logs`` (CLI,
REST, the Lab panel, ``%cluster logs``) then reads that copy. A failed launch's
copies are made by the launcher, through the hook the manager gives it
(``LaunchContext.keep_logs``), before it removes what it made. Copies go with the
session's history (``history_max_*``) or after ``log_keep_days``, whichever comes
first. Used by :class:`~jupyter_cluster.engine.manager.ClusterManager` only.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import shutil
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from pathlib import Path

from ..asyncwait import within
from ..core import naming
from ..core.models import Session
from ..whole_files import replaced_whole

log = logging.getLogger(__name__)
#: Reads one container's log: (container id, tail lines) -> its lines.
LogReader = Callable[[str, str, int], AsyncIterator[str]]


class LogArchive:
    """Kept logs under ``root`` (see the module docstring)."""

    def __init__(self, root: str, *, max_lines: int, max_bytes: int, keep_days: float) -> None:
        self.root = Path(root)
        self.max_lines, self.max_bytes, self.keep_days = max_lines, max_bytes, keep_days

    def path(self, session_id: str, host: str) -> Path:
        """Where ``host``'s log of ``session_id`` is kept (ids and hosts are ours: a UUID
        and main1/subN, never a path)."""
        if not naming.is_uuid(session_id) or not host.isalnum():
            raise ValueError(f"not a session id and host: {session_id!r} {host!r}")
        return self.root / session_id / f"{host}.log"

    def has(self, session_id: str, host: str) -> bool:
        """Whether a kept copy of that log exists."""
        return self.path(session_id, host).is_file()

    def lines(self, session_id: str, host: str, tail: int | None = None) -> Iterator[str]:
        """The kept log's lines (the last ``tail`` of them, if given)."""
        with open(self.path(session_id, host), "rb") as f:  # lines end at \n only
            found: Iterable[bytes] = f if tail is None else collections.deque(f, max(tail, 0))
            for line in found:
                yield line.decode("utf-8", errors="replace")

    async def keep(self, session: Session, read: LogReader, timeout: float = 15.0) -> None:
        """Copy the tail of every created container's log (concurrently; an agent that
        does not answer within ``timeout`` costs that copy, never the caller's
        termination)."""
        jobs = [
            self._keep_one(session.id, c.host, c.agent or "", c.container_id, read)
            for c in session.containers
            if c.container_id
        ]
        if not jobs:
            return
        try:
            await within(asyncio.gather(*jobs, return_exceptions=True), timeout)
        except asyncio.TimeoutError:
            log.warning("keeping the logs of session %s took over %g s", session.name, timeout)

    async def _keep_one(
        self, session_id: str, host: str, agent: str, container_id: str, read: LogReader
    ) -> None:
        kept: collections.deque[str] = collections.deque()
        size = 0
        try:
            async for line in read(agent, container_id, self.max_lines):
                kept.append(line)
                size += len(line.encode())
                while size > self.max_bytes and kept:
                    size -= len(kept.popleft().encode())
        except Exception as exc:  # a log we cannot read is not a reason to fail
            if not kept and self.has(session_id, host):
                return  # kept already when its launch failed; the container is gone
            log.warning("could not keep the log of %s of session %s: %s", host, session_id, exc)
            if not kept:
                return
        self._write(self.path(session_id, host), kept)

    def _write(self, path: Path, lines: Iterable[str]) -> None:
        os.makedirs(self.root, mode=0o700, exist_ok=True)
        os.makedirs(path.parent, mode=0o700, exist_ok=True)
        with replaced_whole(path, "w", encoding="utf-8", errors="replace", newline="") as f:
            f.writelines(lines)

    def prune(self, known: set[str], now: float | None = None) -> int:
        """Remove copies of sessions the store forgot, and those older than
        ``keep_days``; how many sessions' logs were removed."""
        if not self.root.is_dir():
            return 0
        limit = (now or time.time()) - self.keep_days * 86400
        removed = 0
        for entry in self.root.iterdir():
            with contextlib.suppress(FileNotFoundError):
                if entry.name not in known or entry.stat().st_mtime < limit:
                    shutil.rmtree(entry, ignore_errors=True)
                    removed += 1
        return removed
