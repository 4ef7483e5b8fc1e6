"""ClusterProvisioner: a jupyter_client kernel provisioner whose kernel runs in main1.

Registered as ``cluster-provisioner`` under ``jupyter_client.kernel_provisioners``;
any KernelManager (JupyterLab, ``jupyter console``, nbclient…) uses it when the
kernelspec's ``metadata.kernel_provisioner`` names it. Starting the kernel
launches a fresh cluster session through :class:`ClusterManager`, then runs the
kernelspec's argv as ``work`` in ``main1`` (ports published on the agent's
address). The kernel is started as soon as ``main1``'s container runs (once it is
ready, when a bootstrap command is set), while the other containers are still
coming up, so its own start-up overlaps theirs; ``start_kernel`` returns once
the whole session is RUNNING. Restart replaces only the kernel process;
shutdown terminates the session. A start that fails (or times out) leaves no
session behind. Once the kernel answers ``kernel_info`` the session's
``kernel_ready`` timing is recorded (in the background: starting is not delayed).

The engine is configured like the CLI's: ``jupyter_cluster_config`` files on the
Jupyter config path, overridden by the kernel manager's own configuration (e.g.
``jupyter_server_config.py``).
"""

from __future__ import annotations

import asyncio
import logging
import signal
import time
from typing import Any

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.connect import KernelConnectionInfo
from jupyter_client.provisioning import KernelProvisionerBase
from traitlets import Bool, Float, List, Unicode
from traitlets import Int as IntTrait
from traitlets.config import Config

from ..client.shell import ContainerShell, SshRunner
from ..config import LaunchSettings, file_config, local_owner, make_engine
from ..core import naming, timings
from ..core.models import Session
from ..core.state import USABLE, ContainerStatus, SessionStatus
from ..engine.agents.base import Agent, ContainerState
from ..engine.manager import ClusterManager
from ..engine.tunnel import KernelTunnel
from ..errors import ClusterError, LaunchFailed
from .ports import connect_kernel, kernel_side_connection, tunnel_kernel, wait_running
from .process import KernelProcess

#: Seconds to reach main1's sshd from a user's server in team mode.
REMOTE_CONNECT_TIMEOUT = 30.0


#: Sessions being ended in the background (``end_session_in_background``).
ENDING: set[asyncio.Future[None]] = set()


async def _end(engine: ClusterManager, session_id: str) -> None:
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


class ClusterProvisioner(KernelProvisionerBase):
    """Provision a kernel inside ``main1`` of a new cluster session."""

    image = Unicode("", config=True, help="Kernel image; empty uses the manager's default.")
    size = IntTrait(1, config=True, help="Cluster size: main1 plus size-1 sub containers.")
    mode = Unicode("single-node", config=True, help="single-node or multi-node.")
    cpu = Unicode("1", config=True, help="CPUs per container, e.g. 0.5.")
    mem = Unicode("1g", config=True, help="Memory per container, e.g. 512m or 2g.")
    shm = Unicode("64m", config=True, help="Shared memory per container.")
    gpu = IntTrait(0, config=True, help="GPUs per container.")
    mounts = List(Unicode(), config=True, help="Data folders to mount (NAME or NAME:ro).")
    resource_group = Unicode("default", config=True, help="Resource group to schedule in.")
    bootstrap = Unicode("", config=True, help="Shell command run in every container at start.")
    launch_timeout = Float(
        300.0,
        config=True,
        help="Seconds the kernel may take to answer, pending time included; then the "
        "start fails and the session is cancelled or removed.",
    )

    session_id = Unicode(
        None,
        allow_none=True,
        config=True,
        help="Start the kernel in main1 of this existing RUNNING session instead of "
        "launching one (the server's REST API passes it as the ``cluster_session_id`` "
        "argument of start_kernel); shutting the kernel down still terminates it.",
    )
    end_session_in_background = Bool(
        False,
        config=True,
        help="Let shutdown_kernel return once the kernel has ended and its session is "
        "TERMINATING, and remove the containers and network in the background. The "
        "server extension turns this on for its kernels (it keeps running, waits for "
        "these removals when it stops, and its reconciliation finishes any that were "
        "cut short); off by default, since a script's event loop may end first.",
    )
    #: Set (by the server extension, when the server stops) to shut the kernel down
    #: but leave its session running.
    keep_session = False
    _manager: ClusterManager | None = None
    _process: KernelProcess | None = None
    _tunnel: KernelTunnel | None = None
    _shell: ContainerShell | None = None
    _transport = "direct"
    _ready_task: asyncio.Future[None] | None = None

    # -- helpers -------------------------------------------------------------------

    @property
    def manager(self) -> ClusterManager:
        """The engine: ``jupyter_cluster_config`` files, then the kernel manager's config."""
        if self._manager is None:
            config = Config(file_config())
            config.merge(self.config)
            self._manager = make_engine(self, config)
        return self._manager

    def _launch_fields(self) -> dict[str, Any]:
        fields: dict[str, Any] = {
            "size": self.size,
            "mode": self.mode,
            "cpu": self.cpu,
            "mem": self.mem,
            "shm": self.shm,
            "gpu": self.gpu,
            "mounts": list(self.mounts),
            "resource_group": self.resource_group,
            "bootstrap": self.bootstrap or None,
        }
        if self.image:
            fields["image"] = self.image
        return fields

    async def _launch_session(self, cmd: list[str], env: dict[str, str]) -> Session:
        """Launch a new session, starting the kernel in main1 as early as possible.

        With no bootstrap command the kernel starts as soon as main1's container
        runs (its start-up overlaps sshd's and the other containers'); with one,
        once main1 is ready (bootstrap done). Either way this returns only when
        the whole session is RUNNING. On any failure (launch error, timeout,
        cancellation) the session is cancelled or removed before the exception
        propagates.
        """
        early: asyncio.Future[None] | None = None
        seen: Session | None = None  # the latest state reported by the launch
        ready_when = ContainerStatus.RUNNING if self.bootstrap else ContainerStatus.STARTING

        async def start_kernel(s: Session) -> None:
            if self.manager.remote:
                self._process = await self._connect_remote(s.id)
                await self._process.start(cmd, kernel_side_connection(self.parent, "ssh"), env=env)
                return
            main = s.containers[0]
            agent = self.manager.agent(main.agent or "")
            state = await wait_running(agent, main.container_id or "")
            await self._connect(agent, state, s.id)
            self._process = KernelProcess(agent, main.container_id or "", self.kernel_id)
            # Given explicitly: a warm pool's container predates the session.
            full_env = {**naming.container_env(s, main), **env}
            await self._process.start(
                cmd, kernel_side_connection(self.parent, self._transport), env=full_env
            )

        def report(s: Session) -> None:
            nonlocal seen, early
            if s.status_reason and (seen is None or s.status_reason != seen.status_reason):
                self.log.info("cluster session %s %s: %s", s.name, s.status.value, s.status_reason)
            seen = s
            main = s.containers[0]
            if (
                early is None
                and not self.manager.remote  # over SSH: once work and sshd are ready
                and main.container_id
                and main.status in (ready_when, ContainerStatus.RUNNING)
            ):
                early = asyncio.ensure_future(start_kernel(s))

        try:
            manager = self.manager
            await manager.start()
            spec = manager.make_spec(**self._launch_fields())
            # Kernels from /api/kernels count against the REST limit as well.
            quota = None  # the shared service counts every launch of its users
            if not manager.remote:
                default = LaunchSettings.max_sessions_per_user.default_value
                limit = int(manager.config.ClusterApp.get("max_sessions_per_user", default))
                quota = manager.quota(sessions=limit)
            session = await manager.submit(spec, owner=local_owner(), quota=quota)
            self.session_id = session.id
            seen = session
            try:
                session = await asyncio.wait_for(
                    manager.drive(session.id, on_change=report), self.launch_timeout
                )
            except asyncio.TimeoutError:
                seen = seen or session
                fate = "cancelled" if seen.status is SessionStatus.PENDING else "removed"
                raise LaunchFailed(
                    f"cluster session {seen.name} was not ready within "
                    f"{self.launch_timeout:g} s (it was {seen.status.value}: "
                    f"{seen.status_reason or 'no reason given'}); it was {fate}. Raise the "
                    "kernelspec's launch_timeout or free resources (see `jupyter cluster ls`)"
                ) from None
            if session.status not in USABLE:
                raise LaunchFailed(
                    f"cluster session {session.name} is {session.status.value}: "
                    f"{session.status_reason or 'no reason given'}"
                )
            if early is None:
                early = asyncio.ensure_future(start_kernel(session))
            await early
            return session
        except BaseException:
            if early is not None and not early.done():
                early.cancel()
            if early is not None:
                await asyncio.gather(early, return_exceptions=True)
            await self.cleanup(restart=False)
            raise

    async def _connect(
        self, agent: Agent, state: ContainerState, session_id: str, reuse: bool = False
    ) -> None:
        """Point the kernel manager at the kernel in main1 (see :mod:`.ports`)."""
        km = self.parent
        assert km is not None, "ClusterProvisioner runs under a KernelManager"
        await self._close_tunnel()
        previous = self.connection_info if reuse else {}
        self._transport = agent.config.kernel_transport
        keys = self.manager.store.load_keys(session_id) or {}
        self._tunnel = await connect_kernel(km, agent, state, keys, previous)
        self.connection_info = km.get_connection_info()

    async def _connect_remote(self, session_id: str, reuse: bool = False) -> KernelProcess:
        """Team mode: tunnel the kernel's ports over SSH to main1 with the session's
        keys from the service; the kernel process is run and signalled over SSH too."""
        km = self.parent
        assert km is not None, "ClusterProvisioner runs under a KernelManager"
        access = await self.manager.access(session_id)
        await self._close_tunnel()
        previous = self.connection_info if reuse else {}
        self._transport = "ssh"
        self._tunnel = await tunnel_kernel(
            km, access.address, access.port, access.keys, previous, REMOTE_CONNECT_TIMEOUT
        )
        self.connection_info = km.get_connection_info()
        self._shell = ContainerShell(access)
        return KernelProcess(SshRunner(self._shell), "", self.kernel_id)

    async def _close_tunnel(self) -> None:
        if self._tunnel is not None:
            await self._tunnel.close()
            self._tunnel = None
        if self._shell is not None:
            await self._shell.close()
            self._shell = None

    async def _attach(self, session: Session) -> KernelProcess:
        """Point the kernel manager at a running main1; a process handle for its kernel."""
        if self.manager.remote:
            self._process = await self._connect_remote(session.id, reuse=True)
            return self._process
        main = session.containers[0]
        agent = self.manager.agent(main.agent or "")
        state = await agent.inspect_container(main.container_id or "")
        if state is None or not state.running:
            why = "is gone" if state is None else f"exited with code {state.exit_code}"
            raise ClusterError(
                f"main1 of cluster session {session.name} {why}, so its kernel cannot be "
                "restarted; shut the kernel down (that ends the session) and start a new one"
            )
        await self._connect(agent, state, session.id, reuse=True)  # a restart keeps its ports
        self._process = KernelProcess(agent, main.container_id or "", self.kernel_id)
        return self._process

    # -- KernelProvisionerBase -------------------------------------------------------

    @property
    def has_process(self) -> bool:
        """Whether a kernel process is known (started, or re-attached)."""
        return self._process is not None

    async def pre_launch(self, **kwargs: Any) -> dict[str, Any]:
        """Launch (or, on restart, reuse) the session and prepare the kernel command.

        On a first start the kernel process is already started here (as soon as
        main1 is ready); on a restart :meth:`launch_kernel` starts it.
        """
        # Not km.format_kernel_cmd: it would swap "python3" for the server's interpreter.
        inner = KernelProcess.connection_path(self.kernel_id)
        cmd = [part.replace("{connection_file}", inner) for part in self.kernel_spec.argv]
        cmd += kwargs.pop("extra_arguments", [])
        kwargs.pop("env", None)
        attach = kwargs.pop("cluster_session_id", None)
        if attach:
            self.session_id = attach
        env = dict(self.kernel_spec.env or {})
        if self.session_id is None:
            await self._launch_session(cmd, env)
        else:
            session = await self.manager.get(self.session_id)
            if session.status not in USABLE:
                raise ClusterError(f"cluster session {session.name} is {session.status.value}")
            await self._attach(session)
            if not self.manager.remote:  # over SSH, ~/.ssh/environment sets it
                env = {**naming.container_env(session, session.containers[0]), **env}
        return {**kwargs, "cmd": cmd, "env": env}

    async def launch_kernel(self, cmd: list[str], **kwargs: Any) -> KernelConnectionInfo:
        """Run the kernel as ``work`` in main1 (unless already started) and hand back
        host-side connection info."""
        assert self._process is not None
        if not self._process.started:
            await self._process.start(
                cmd,
                kernel_side_connection(self.parent, self._transport),
                env=kwargs.get("env") or {},
            )
        self._time_kernel_ready()
        return self.connection_info

    def _time_kernel_ready(self) -> None:
        """Record the session's ``kernel_ready`` phase (see core.timings) in the
        background, once per session (not on restarts, not in team mode)."""
        if self.manager.remote or self.session_id is None:
            return
        session = self.manager.store.get(self.session_id)
        if session is None or "kernel_ready" in session.timings:
            return
        self._ready_task = asyncio.ensure_future(self._record_kernel_ready(session))

    async def _record_kernel_ready(self, session: Session) -> None:
        """Wait until the kernel answers ``kernel_info``; keep how long after the
        session was RUNNING (0 if before: the kernel starts early)."""
        client = AsyncKernelClient()
        client.load_connection_info(self.connection_info)
        try:
            client.start_channels(hb=False)  # no manager here to judge the heartbeat
            await client.wait_for_ready(timeout=self.launch_timeout)
        except Exception as exc:  # the kernel manager reports a kernel that fails
            self.log.debug("cluster session %s: no kernel_ready timing: %s", session.name, exc)
            return
        finally:
            client.stop_channels()
        running = timings.elapsed_until_running(session.created_at, session.timings)
        seconds = max(0.0, time.time() - running)
        self.log.debug("session %s: phase kernel_ready took %.3f s", session.id, seconds)
        if self._manager is not None:
            self._manager.store.add_timings(session.id, {"kernel_ready": seconds})

    async def poll(self) -> int | None:
        """``KernelManager.is_alive``: None while the kernel runs, else its exit code."""
        return None if self._process is None else await self._process.poll()

    async def wait(self) -> int | None:
        """Wait for the kernel process to end (shutdown); its exit code."""
        if self._process is None:
            return 0
        return await self._process.wait()

    async def send_signal(self, signum: int) -> None:
        """``KernelManager.signal_kernel`` / interrupt: signal the kernel in main1."""
        if self._process is not None:
            await self._process.signal(signum)

    async def kill(self, restart: bool = False) -> None:
        """SIGKILL the kernel process (the containers stay until cleanup)."""
        await self.send_signal(signal.SIGKILL)

    async def terminate(self, restart: bool = False) -> None:
        """SIGTERM the kernel process (the containers stay until cleanup)."""
        await self.send_signal(signal.SIGTERM)

    async def cleanup(self, restart: bool = False) -> None:
        """Forget the kernel process; unless restarting, terminate the whole session."""
        if self._ready_task is not None and not restart:
            self._ready_task.cancel()
            await asyncio.gather(self._ready_task, return_exceptions=True)
            self._ready_task = None
        if self._process is not None:
            await self._process.close()
            self._process = None
        if restart:
            return
        await self._close_tunnel()
        session_id, self.session_id = self.session_id, None
        engine, self._manager = self._manager, None
        try:
            if session_id is not None and not self.keep_session:
                engine = engine or self._engine_for_cleanup()
                if self.end_session_in_background and not engine.remote:
                    engine.store.mark_terminating(session_id)
                    ending = asyncio.ensure_future(_end(engine, session_id))
                    ENDING.add(ending)
                    ending.add_done_callback(ENDING.discard)
                    engine = None  # _end closes it
                else:
                    await engine.terminate(session_id)
        finally:
            if engine is not None:
                await engine.close()

    def _engine_for_cleanup(self) -> ClusterManager:
        """The engine, made now if this provisioner never needed it (then closed by
        :func:`_end` or right here)."""
        engine = self.manager
        self._manager = None
        return engine

    def get_shutdown_wait_time(self, recommended: float = 5.0) -> float:
        """Seconds the kernel manager waits for a graceful shutdown (its default)."""
        return recommended

    def get_stable_start_time(self, recommended: float = 10.0) -> float:
        """Seconds a kernel must run to count as started: a cluster start takes longer."""
        return max(recommended, 20.0)

    async def get_provisioner_info(self) -> dict[str, Any]:
        """What a server needs to re-attach to this kernel after a restart."""
        info = await super().get_provisioner_info()
        connection = dict(info.get("connection_info") or {})
        if isinstance(connection.get("key"), bytes):  # JSON-safe, as servers persist it
            connection["key"] = connection["key"].decode()
        info["connection_info"] = connection
        info["session_id"] = self.session_id
        return info

    async def load_provisioner_info(self, provisioner_info: dict[str, Any]) -> None:
        """Re-attach to a kernel of a running session (see get_provisioner_info)."""
        await super().load_provisioner_info(provisioner_info)
        self.session_id = provisioner_info.get("session_id")
        if self.session_id and self.manager.remote:
            self._process = await self._connect_remote(self.session_id, reuse=True)
        elif self.session_id:
            session = await self.manager.get(self.session_id)
            main = session.containers[0]
            agent = self.manager.agent(main.agent or "")
            if agent.config.kernel_transport == "ssh":
                state = await agent.inspect_container(main.container_id or "")
                if state is None or not state.running:
                    raise ClusterError(f"main1 of cluster session {session.name} is not running")
                await self._connect(agent, state, session.id, reuse=True)
            self._process = KernelProcess(agent, main.container_id or "", self.kernel_id)
