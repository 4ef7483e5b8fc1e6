"""SessionReader: what the engine tells and does about existing sessions.

Owned by :class:`~jupyter_cluster.engine.manager.ClusterManager` (which hands it the
store, the agent pool, the log archive and the exec log): the CLI (``ls``,
``show``, ``logs``, ``exec``, ``top``), the REST handlers, the provisioner and the
notebook API reach these methods through the manager: find sessions, locate a
container, read logs (kept ones once a session ended), run commands, read
resource use, and the SSH access an owner's own server uses in team mode.
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import AsyncIterator, Sequence

from ..core import naming
from ..core.access import Access, public_material
from ..core.models import Container, Session
from ..core.state import ENDED, USABLE, ContainerStatus
from ..core.stats import Usage, usage_from_docker
from ..errors import AgentError, Conflict, InvalidRequest, NotFound
from .agents.base import Agent, OutputCallback
from .agents.pool import AgentPool
from .gpu_stats import sample
from .log_archive import LogArchive
from .store.exec_log import ExecLog
from .store.sessions import Store


class SessionReader:
    """Look sessions up, read their containers' logs and use, run commands in them."""

    def __init__(
        self, store: Store, pool: AgentPool, log_archive: LogArchive, exec_log: ExecLog
    ) -> None:
        self.store = store
        self.pool = pool
        self.log_archive = log_archive
        self.exec_log = exec_log

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
        return self.pool.get(container.agent), container.container_id

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
        the session has ended, of the copy kept then (``follow`` ends with it).
        ``tail``: the last lines only, 0 or more (a negative one gave no line)."""
        if tail is not None and (isinstance(tail, bool) or not isinstance(tail, int) or tail < 0):
            raise InvalidRequest(f"tail: give a number of lines, 0 or more, got {tail!r}", "tail")
        session = self.store.resolve(ref)
        container = session.locate(host)
        gone = session.status in ENDED or container.status is ContainerStatus.TERMINATED
        if gone and self.log_archive.has(session.id, host):
            for line in self.log_archive.lines(session.id, host, tail):
                yield line
            return
        agent, container_id = self.locate(session, host)
        async for line in agent.logs(container_id, tail=tail, follow=follow, for_user=True):
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
        for i, word in enumerate(cmd, 1):
            if not isinstance(word, str):
                raise InvalidRequest(
                    f"cmd: give the command's words as text; word {i} is {word!r}", "cmd"
                )
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

    async def access(self, ref: str) -> Access:
        """How the session's owner reaches it over SSH: main1's published SSH port on
        its agent's address, and the session's keys (terminals, the shared service's
        ``GET sessions/{id}/access``). Conflict unless main1 runs."""
        session = self.store.resolve(ref)
        main = session.containers[0]
        keys = self.store.load_keys(session.id)
        state = None
        if main.container_id and session.status in USABLE:
            state = await self.pool.get(main.agent or "").inspect_container(main.container_id)
        if state is None or not state.running or not keys:
            raise Conflict(
                f"main1 of session {session.name} is not running; its containers are "
                "reached through it"
            )
        if naming.SSH_PORT not in state.ports:
            raise Conflict(f"main1 of session {session.name} publishes no SSH port")
        address = self.pool.get(main.agent or "").config.connect_address
        return Access(address, state.ports[naming.SSH_PORT][1], public_material(keys))

    async def stats(self, ref: str) -> dict[str, Usage | None]:
        """Each container's use now (CPU, memory, network, block IO; GPUs for a container
        given some, see :mod:`.gpu_stats`), read from its agent concurrently (about a
        second: Docker measures CPU over one); None for a container that is not
        running or whose agent does not answer."""
        session = self.store.resolve(ref)
        if session.status not in USABLE:
            raise Conflict(f"session {session.name} is {session.status.value}, not running")

        async def one(container: Container) -> Usage | None:
            if container.status is not ContainerStatus.RUNNING or not container.container_id:
                return None
            agent, cid = self.pool.get(container.agent or ""), container.container_id
            try:
                raw, gpus, note = await sample(agent, cid, bool(container.gpu_ids))
            except AgentError:
                return None
            return usage_from_docker(raw).with_gpus(gpus, note)

        found = await asyncio.gather(*(one(c) for c in session.containers))
        return dict(zip(session.hosts, found, strict=True))
