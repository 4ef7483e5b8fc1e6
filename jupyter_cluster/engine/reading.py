"""What the manager tells and does about existing sessions: find, locate, logs, exec.

:class:`SessionReading` is one of the bases of
:class:`~jupyter_cluster.engine.manager.ClusterManager` (above
:class:`~.owned.OwnerViews`): the CLI (``ls``, ``show``, ``logs``, ``exec``), the REST
handlers, the provisioner and the notebook API call these methods on the manager.
Launching (:mod:`.launching`) and ending (:mod:`.ending`) build on its :meth:`_get`.
"""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator, Sequence

from ..core import naming
from ..core.models import Session
from ..core.state import ENDED, USABLE, ContainerStatus
from ..errors import InvalidRequest, NotFound
from .agents.base import Agent, OutputCallback
from .log_archive import LogArchive
from .owned import OwnerViews
from .store.exec_log import ExecLog


class SessionReading(OwnerViews):
    """Look sessions up, read their containers' logs, run commands in them."""

    #: Made by ClusterManager.__init__.
    exec_log: ExecLog
    log_archive: LogArchive

    def _get(self, session_id: str) -> Session:
        session = self.store.get(session_id)
        if session is None:
            raise NotFound(f"no session {session_id}")
        return session

    async def get(self, ref: str, owner: str | None = None) -> Session:
        """A session by id, unique id prefix or name (among ``owner``'s, if given)."""
        return self.store.resolve(ref, owner)

    async def list(self, include_ended: bool = False) -> builtins.list[Session]:
        """Active sessions, or all of them with history when ``include_ended``."""
        return self.store.list(include_ended=include_ended)

    def locate(self, session: Session, host: str) -> tuple[Agent, str]:
        """The agent and container id of ``host``; NotFound when the session has no
        such host, has ended, or has not created that container yet.

        Logs, exec and the REST handlers (before a log stream starts) use it.
        """
        container = session.locate(host)
        if session.status in ENDED or container.status is ContainerStatus.TERMINATED:
            raise NotFound(f"session {session.name} is {session.status}: its containers are gone")
        if not container.container_id or not container.agent:
            raise NotFound(
                f"{host} of session {session.name} has no container yet ({session.status})"
            )
        return self.agent(container.agent), container.container_id

    def check_logs(self, session: Session, host: str) -> None:
        """NotFound unless ``host``'s log can be read: from its container, or the copy
        kept when the session ended (the REST handler asks before it streams)."""
        session.locate(host)
        if not self.log_archive.has(session.id, host):
            self.locate(session, host)

    async def logs(
        self, ref: str, host: str, *, tail: int | None = None, follow: bool = False
    ) -> AsyncIterator[str]:
        """Lines of one container's log (start-up, bootstrap, sshd, the kernel…); once
        the session has ended, of the copy kept then (``follow`` ends with it)."""
        session = self.store.resolve(ref)
        container = session.locate(host)
        gone = session.status in ENDED or container.status is ContainerStatus.TERMINATED
        if gone and self.log_archive.has(session.id, host):
            for line in self.log_archive.lines(session.id, host, tail):
                yield line
            return
        agent, container_id = self.locate(session, host)
        async for line in agent.logs(container_id, tail=tail, follow=follow):
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
        if not cmd:
            raise InvalidRequest("give a command to run, e.g. -- hostname", "cmd")
        session = self.store.resolve(ref)
        if session.status not in USABLE:
            raise InvalidRequest(f"session {session.name} is {session.status}, not running")
        agent, container_id = self.locate(session, host)
        # The environment is given at every exec: a container taken from the warm pool
        # was created before its session existed.
        env = naming.container_env(session, session.locate(host))
        # Logged, so a server's idle clean-up sees the execs of any process.
        with self.exec_log.running(session.id):
            return await agent.exec(container_id, cmd, env=env, on_output=on_output)
