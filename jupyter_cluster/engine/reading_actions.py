"""The local engine's reading methods: sessions by reference, listings and pages,
logs, commands run in containers, resource use and SSH access.

A base of :class:`~jupyter_cluster.engine.manager.ClusterManager` (its ``store`` and
``reader``, the :class:`~.reading.SessionReader`): the CLI, the REST handlers, the
provisioner and the notebook API call these Engine methods.
"""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator, Sequence

from ..core.access import Access
from ..core.models import Session
from ..core.state import LISTINGS
from ..core.stats import Usage
from .agents.base import OutputCallback
from .reading import SessionReader
from .store.sessions import Store


class ReadingActions:
    """What the engine tells about sessions, through its store and reader."""

    store: Store
    reader: SessionReader

    async def get(self, ref: str, owner: str | None = None) -> Session:
        """A session by id, unique id prefix or name (among ``owner``'s, if given)."""
        return self.store.resolve(ref, owner)

    async def list(self, include_ended: bool = False) -> builtins.list[Session]:
        """Active sessions, or all of them with history when ``include_ended``."""
        return self.store.list(include_ended=include_ended)

    async def page(
        self, state: str, limit: int, before: str | None = None, owner: str | None = None
    ) -> builtins.list[Session]:
        """At most ``limit`` sessions of the listing ``state`` (active, ended, all; see
        ``core.state.LISTINGS``), newest first, older than ``before`` (``GET
        sessions?limit=``; only ``owner``'s when given)."""
        return self.store.page(LISTINGS[state], limit, before, owner)

    def check_logs(self, session: Session, host: str) -> None:
        """NotFound unless ``host``'s log can be read (see SessionReader.check_logs)."""
        self.reader.check_logs(session, host)

    async def logs(
        self, ref: str, host: str, *, tail: int | None = None, follow: bool = False
    ) -> AsyncIterator[str]:
        """Lines of one container's log (kept ones once the session has ended)."""
        async for line in self.reader.logs(ref, host, tail=tail, follow=follow):
            yield line

    async def exec(
        self,
        ref: str,
        host: str,
        cmd: Sequence[str],
        *,
        on_output: OutputCallback | None = None,
    ) -> int:
        """Run ``cmd`` as ``work`` in one container; returns its exit code."""
        return await self.reader.exec(ref, host, cmd, on_output=on_output)

    async def stats(self, ref: str) -> dict[str, Usage | None]:
        """Each container's resource use now (see SessionReader.stats)."""
        return await self.reader.stats(ref)

    async def access(self, ref: str) -> Access:
        """How the session's owner reaches main1 over SSH (see SessionReader.access)."""
        return await self.reader.access(ref)
