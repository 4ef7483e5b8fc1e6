"""ClusterManager: the one engine every front end calls.

The CLI, the REST handlers, the kernel provisioner, the notebook API and widgets
all launch, list, inspect, read logs of, run commands in and terminate cluster
sessions through this class. It owns the agents (IO edge), the store (SQLite) and
the data folders, and is configured with traitlets from the usual Jupyter config
files (``jupyter_cluster_config.py``, ``jupyter_server_config.py``).
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import os
import time
import uuid
from collections.abc import AsyncIterator, Callable, Sequence

from ..core import naming
from ..core.models import Container, LaunchSpec, Session
from ..core.quota import Quota
from ..core.scheduler import Placement, place
from ..core.state import ALLOCATING, ENDED, FINAL, USABLE, ContainerStatus, SessionStatus
from ..core.timings import LaunchClock
from ..core.units import parse_size
from ..core.warm import parse_targets
from ..errors import ClusterError, InvalidRequest, LaunchFailed, NotFound
from .agents.base import Agent, OutputCallback
from .agents.pool import AgentPool
from .agents.registry import agent_configs, make_agent
from .drivers import this_process
from .exec_log import ExecLog
from .folders import DataFolders
from .hardening import ContainerHardening
from .launcher import LaunchContext, bring_up
from .log_archive import LogArchive
from .owned import OwnerViews
from .pending import QueuePolicy, place_once, wait_for_room
from .reconcile import Reconciler
from .ssh import generate_session_keys
from .store import Store
from .teardown import tear_down
from .warm_pool import WarmPool

#: Extra clean-up sweeps (0.5 s apart) when terminating a session still PREPARING.
TEAR_DOWN_RETRIES = 20
#: Called with the session each time it changes while a launch is driven.
SessionCallback = Callable[[Session], None]


class ClusterManager(OwnerViews):
    """Launch and manage cluster sessions on the configured Docker agents.

    Configured as ``c.ClusterManager.*`` (the traits are in :mod:`.settings`).
    """

    #: Not the shared service's client (:class:`~jupyter_cluster.client.remote.RemoteEngine`).
    remote = False

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.store = Store(self.db_path)
        #: Commands running in sessions (exec), in the store's file: see :mod:`.exec_log`.
        self.exec_log = ExecLog(self.db_path)
        self.folders = DataFolders(self.data_root)
        self.log_archive = LogArchive(
            os.path.join(os.path.dirname(os.path.abspath(self.db_path)), "logs"),
            max_lines=self.log_keep_lines,
            max_bytes=parse_size(self.log_keep_size, "ClusterManager.log_keep_size"),
            keep_days=self.log_keep_days,
        )
        timeouts = {"timeout": self.docker_timeout, "connect_timeout": self.docker_connect_timeout}
        configs = agent_configs(self.agents, self.data_root, timeouts)
        for config in configs:
            if config.insecure and config.url.startswith("tcp://"):
                self.log.warning(
                    "agent %s: %s is a plain TCP Docker API (insecure: True): anyone who "
                    "reaches it is root on that host and sees session keys in clear text",
                    config.id,
                    config.url,
                )
        self.pool = AgentPool(configs, self.agent_factory or make_agent)
        self.hardening = ContainerHardening(parent=self)
        targets = parse_targets(self.warm_pool, self.default_image, self.max_size)
        self.warm = WarmPool(
            self.store, self.pool, targets, self.hardening.limits, self.warm_pool_interval
        )
        self._reconciled = False

    # -- agents ------------------------------------------------------------------

    @property
    def agent_map(self) -> dict[str, Agent]:
        """The agents by id."""
        return dict(self.pool.agents)

    def agent(self, agent_id: str) -> Agent:
        """The agent called ``agent_id``; NotFound when there is none."""
        return self.pool.get(agent_id)

    async def agents_info(self) -> builtins.list[dict[str, object]]:
        """Capacity, allocated and free resources per agent (``jupyter cluster agents``)."""
        return await self.pool.rows(self.store.usage())

    async def resource_groups_info(self, groups: Sequence[str]) -> builtins.list[dict[str, object]]:
        """Capacity, used and free resources summed per group (``GET resource-groups``)."""
        return await self.pool.group_rows(self.store.usage(), groups)

    async def images_info(self, images: Sequence[str]) -> builtins.list[dict[str, object]]:
        """Which agents have each image, the first being the default (``GET images``)."""
        return await self.pool.image_rows(images)

    # -- start-up ----------------------------------------------------------------

    async def start(self) -> None:
        """Reconcile the store with Docker once; front ends call this first."""
        if not self._reconciled:
            self._reconciled = True
            pruned = self.store.prune_history(
                self.history_max_age_days * 86400, self.history_max_count
            )
            if pruned:
                self.log.info("forgot %d ended session(s) past the history limits", pruned)
            known = {s.id for s in self.store.list(include_ended=True)}
            self.log_archive.prune(known)
            await self.refresh()

    async def refresh(self) -> None:
        """One reconciliation pass: notice dead containers, clean up orphans.

        Long-running front ends (the server) call this periodically so a session
        whose container died shows RUNNING_DEGRADED without a restart.
        """
        reconciler = Reconciler(
            self.store,
            self.agent_map,
            orphan_policy=self.orphan_policy,
            finish_termination=self.terminate,
            log=self.log,
        )
        await reconciler.run()

    # -- launching ---------------------------------------------------------------

    def make_spec(self, **fields: object) -> LaunchSpec:
        """Validate raw launch input (CLI flags, JSON) with this manager's limits."""
        fields.setdefault("image", self.default_image)
        return LaunchSpec.create(max_size=self.max_size, **fields)  # type: ignore[arg-type]

    def quota(self, sessions: int = 0) -> Quota:
        """The per-owner limits (``max_*_per_owner``); ``sessions`` tightens the
        session count (e.g. ``ClusterApp.max_sessions_per_user`` for REST)."""
        counts = [n for n in (self.max_sessions_per_owner, sessions) if n > 0]
        return Quota(
            sessions=min(counts, default=0),
            cpu=max(self.max_cpu_per_owner, 0.0),
            mem=parse_size(self.max_mem_per_owner, "ClusterManager.max_mem_per_owner")
            if self.max_mem_per_owner
            else 0,
            gpu=max(self.max_gpu_per_owner, 0),
        )

    async def submit(
        self,
        spec: LaunchSpec,
        *,
        owner: str = "",
        quota: Quota | None = None,
        kernel: bool = False,
    ) -> Session:
        """Check a spec against agents and folders, record it PENDING, try to place it.

        Raises :class:`InvalidRequest`/:class:`NotFound` (nothing stored) for
        input that can never work: unknown folder, group or image, a size that
        no agent could ever hold; Conflict when it would take ``owner`` over
        ``quota`` (default: :meth:`quota`). With ``kernel`` the session records the
        id of the kernel a server will start in main1 (the session's own id).
        """
        if spec.size > self.max_size:
            raise InvalidRequest(f"size: the cluster size must be 1 to {self.max_size}", "size")
        folders = self.folders_for(owner)
        for mount in spec.mounts:
            folders.path(mount.name)
        slots = await self.pool.slots(spec.image)
        place(spec, slots)  # raises for requests that can never fit; result unused here
        session_id = str(uuid.uuid4())
        now = time.time()
        session = Session(
            id=session_id,
            spec=spec,
            status=SessionStatus.PENDING,
            containers=naming.plan_containers(session_id, spec.size),
            created_at=now,
            updated_at=now,
            owner=owner,
        )
        self.store.insert_session(session, self.quota() if quota is None else quota)
        if kernel:
            self.store.set_kernel_id(session_id, session_id)
        self.store.set_driver(session_id, this_process())
        place_once(self.store, session_id, slots, self._queue_policy())
        return self._get(session_id)

    def _queue_policy(self) -> QueuePolicy:
        return QueuePolicy(
            poll_interval=self.pending_poll_interval,
            timeout=self.pending_timeout,
            backfill=self.pending_backfill,
        )

    async def launch(
        self, spec: LaunchSpec, *, owner: str = "", on_change: SessionCallback | None = None
    ) -> Session:
        """Submit and drive a session until it runs; raises LaunchFailed on error."""
        session = await self.submit(spec, owner=owner)
        return await self.drive(session.id, on_change=on_change)

    async def drive(self, session_id: str, *, on_change: SessionCallback | None = None) -> Session:
        """Wait for room while PENDING, then bring the containers up.

        Returns the RUNNING session, or the CANCELLED one if someone cancelled
        it; raises :class:`LaunchFailed` (session ERROR) when bringing it up
        fails. If the caller is cancelled (Ctrl-C), the session is cancelled or
        torn down; nothing is left behind.
        """
        self.store.set_driver(session_id, this_process())
        notify = on_change or (lambda s: None)
        try:
            session = await wait_for_room(
                self.store, session_id, self.pool.slots, self._queue_policy(), notify
            )
            if session.status is not SessionStatus.PREPARING:
                return session
            notify(session)
            return await self._prepare(session, notify)
        except asyncio.CancelledError:
            await self._abandon(session_id)
            raise

    async def _prepare(self, session: Session, notify: SessionCallback) -> Session:
        """Bring a placed session up; any failure leaves it ERROR with nothing behind."""

        async def progress(host: str, status: ContainerStatus, container_id: str | None) -> None:
            changes: dict[str, object] = {"status": status}
            if container_id:
                changes["container_id"] = container_id
            notify(self.store.update_container(session.id, host, **changes))

        clock = LaunchClock(session.id, session.hosts)
        try:
            keys = generate_session_keys(session.id, session.hosts)
            self.store.save_keys(session.id, keys)
            mounts = {}
            for agent_id in {c.agent for c in session.containers if c.agent}:
                root = self.pool.get(agent_id).config.data_root or self.data_root
                folders = self.folders_for(session.owner)
                mounts[agent_id] = folders.bind_mounts(session.spec.mounts, root)
            warm = self.warm.take(session)  # before make_room: taken ones are not evicted
            if warm:
                session = self._get(session.id)  # with the set's network
            await self.warm.make_room(session)
            ctx = LaunchContext(
                agents=self.pool.agents,
                manager_id=self.store.manager_id,
                keys=keys,
                mounts=mounts,
                timeout=self.prepare_timeout,
                encrypted_overlay=self.overlay_encryption,
                limits=self.hardening.limits(),
                clock=clock,
                keep_logs=self._keep_launch_logs if self.keep_logs else None,
                warm=warm,
            )
            await bring_up(session, ctx, progress)
            self.store.add_timings(session.id, clock.timings)
        except LaunchFailed as exc:
            self._keep_timings(session.id, clock)
            await self._fail_launch(session, str(exc), notify, clean_up=False)
            raise LaunchFailed(f"session {session.name} failed to launch: {exc}") from exc
        except Exception as exc:  # a bug or a lost store must not leave it PREPARING
            self._keep_timings(session.id, clock)
            await self._fail_launch(session, f"{type(exc).__name__}: {exc}", notify)
            raise LaunchFailed(f"session {session.name} failed to launch: {exc}") from exc
        current = self._get(session.id)
        if current.status is not SessionStatus.PREPARING:  # terminated meanwhile
            await tear_down(current, self.pool.agents, self.store.manager_id)
            return current
        session = self.store.set_status(session.id, SessionStatus.RUNNING, "")
        self.store.set_driver(session.id, None)
        notify(session)
        return session

    def _keep_timings(self, session_id: str, clock: LaunchClock) -> None:
        """Keep the phases a failed launch got through (best effort)."""
        with contextlib.suppress(Exception):
            self.store.add_timings(session_id, clock.timings)

    async def _fail_launch(
        self, session: Session, reason: str, notify: SessionCallback, *, clean_up: bool = True
    ) -> None:
        """End a failed launch: nothing left on the agents, no keys, ERROR with why.

        ``bring_up`` already removed what it made when it raised LaunchFailed.
        """
        if clean_up:
            with contextlib.suppress(Exception):
                await tear_down(self._get(session.id), self.pool.agents, self.store.manager_id)
        self.store.delete_keys(session.id)
        current = self._get(session.id)
        if current.status is SessionStatus.PREPARING:
            current = self.store.set_status(session.id, SessionStatus.ERROR, reason[:2000])
            self._mark_containers(current, ContainerStatus.TERMINATED)
        notify(self._get(session.id))

    def _mark_containers(self, session: Session, status: ContainerStatus) -> None:
        for container in session.containers:
            self.store.update_container(session.id, container.host, status=status)

    async def _abandon(self, session_id: str) -> None:
        session = self._get(session_id)
        if session.status is SessionStatus.PENDING:
            self.store.set_status(session_id, SessionStatus.CANCELLED, "cancelled while waiting")
        elif session.status in ALLOCATING:
            await self.terminate(session_id)

    # -- queries -----------------------------------------------------------------

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

    # -- ending ------------------------------------------------------------------

    def _read_log(self, agent_id: str, container_id: str, tail: int) -> AsyncIterator[str]:
        return self.agent(agent_id).logs(container_id, tail=tail)

    async def terminate(self, ref: str, reason: str = "") -> Session:
        """Cancel a PENDING session, or remove every container and the network;
        ``reason`` (default: by the user) is kept in its history."""
        session = self.store.resolve(ref)
        if session.status is SessionStatus.PENDING:
            return self.store.set_status(
                session.id, SessionStatus.CANCELLED, reason or "cancelled by the user"
            )
        if session.status in FINAL:
            return session
        was_preparing = session.status is SessionStatus.PREPARING
        if session.status is not SessionStatus.ERROR:
            session = self.store.set_status(session.id, SessionStatus.TERMINATING, "")
        if self.keep_logs:  # the logs outlive the containers (read them with `logs`)
            await self.log_archive.keep(session, self._read_log)
        problems = await tear_down(session, self.pool.agents, self.store.manager_id)
        # While PREPARING, the launching process (maybe another one) may still be
        # creating containers, which keeps the network busy: sweep again until it
        # has seen TERMINATING and stopped.
        for _ in range(TEAR_DOWN_RETRIES if was_preparing else 0):
            if not problems:
                break
            await asyncio.sleep(0.5)
            problems = await tear_down(session, self.pool.agents, self.store.manager_id)
        if problems:
            raise ClusterError(
                f"could not remove everything of session {session.name}: " + "; ".join(problems)
            )
        self.store.delete_keys(session.id)
        self._mark_containers(session, ContainerStatus.TERMINATED)
        if session.status is SessionStatus.ERROR:  # keep why it failed in the history
            reason = f"removed after an error: {session.status_reason}"
            return self.store.set_status(session.id, SessionStatus.TERMINATED, reason)
        return self.store.set_status(session.id, SessionStatus.TERMINATED, reason or "terminated")

    async def close(self) -> None:
        """Close the agents' connections and the store."""
        await self.pool.close()
        self.exec_log.close()
        self.store.close()

    async def _keep_launch_logs(self, session: Session, containers: Sequence[Container]) -> None:
        """bring_up's hook when a launch fails: keep its containers' logs (bounded like
        at termination) before they are removed, so ``logs`` shows all of them."""
        await self.log_archive.keep(session.with_(containers=tuple(containers)), self._read_log)


__all__ = ["ClusterManager", "Placement"]
