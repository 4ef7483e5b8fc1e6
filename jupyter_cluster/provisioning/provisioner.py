"""ClusterProvisioner: a jupyter_client kernel provisioner whose kernel runs in main1.

Registered as ``cluster-provisioner`` under ``jupyter_client.kernel_provisioners``;
any KernelManager (JupyterLab, ``jupyter console``, nbclient…) uses it when the
kernelspec's ``metadata.kernel_provisioner`` names it. Starting the kernel
launches a fresh cluster session through the engine (``Engine``), then runs the
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

This module is the jupyter_client API; the work is in its helpers: the launch
options (:mod:`.options`), launching a session (:mod:`.session_launch`), reaching
the kernel (:mod:`.kernel_link`, :mod:`..reach`, :mod:`.process`), its
``kernel_ready`` timing (:mod:`.kernel_ready`) and ending the session
(:mod:`.endings`).
"""

from __future__ import annotations

import asyncio
import signal
from functools import partial
from typing import Any

from jupyter_client.connect import KernelConnectionInfo
from jupyter_client.provisioning import KernelProvisionerBase
from traitlets import Bool, Unicode
from traitlets.config import Config

from ..config import file_config, launch_settings, local_owner, make_engine
from ..core.models import Session
from ..core.state import USABLE
from ..core.workdir import Workdir, home
from ..engine.api import Engine
from ..errors import ClusterError
from ..reach.ports import kernel_side_connection
from .endings import (
    end_session,
    in_background,
    kernel_ended,
    launching,
    removing_subs,
    stopping,
)
from .kernel_link import KernelLink, Reached
from .kernel_ready import kernel_ready_seconds
from .left_behind import close_on_loop
from .options import LaunchOptions
from .process import GC_FREEZE_ENV, KernelProcess
from .session_launch import launch_session
from .workdir import DRIVE_KWARG, NOTE_ENV, NotebookDir

#: Seconds each poll may wait for the kernel to end once its shutdown was requested:
#: more than jupyter_client's 0.1 s between polls, so the end is never missed until
#: the next one, and well under its wait before it sends SIGTERM.
SHUTDOWN_POLL = 1.0


# mypy cannot see that jupyter_client's KernelProvisionerMeta derives from MetaHasTraits.
class ClusterProvisioner(LaunchOptions, NotebookDir, KernelProvisionerBase):  # type: ignore[metaclass]
    """Provision a kernel inside ``main1`` of a new cluster session."""

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
        help="Let shutdown_kernel return once the kernel was asked to end and its "
        "session is TERMINATING; the kernel's own exit (within the kernel manager's "
        "shutdown_wait_time) and removing the containers and network go on in the "
        "background (a restart still waits for the kernel's exit). The "
        "server extension turns this on for its kernels (it keeps running, waits for "
        "these removals when it stops, and its reconciliation finishes any that were "
        "cut short); off by default, since a script's event loop may end first.",
    )
    gc_freeze_startup = Bool(
        True,
        config=True,
        help="Once the kernel in main1 has started, move the objects of its start-up "
        "(IPython, ipykernel and their imports) into Python's permanent GC generation "
        "(gc.freeze): collections skip them, and the kernel's exit at shutdown takes "
        "about 0.04 s instead of 0.6 s at 0.5 CPU. Objects made by user code are "
        "collected as before. False leaves the kernel's garbage collector as it is.",
    )
    #: Set (by the server extension, when the server stops) to shut the kernel down
    #: but leave its session running.
    keep_session = False
    _engine: Engine[Any] | None = None
    _config: Config | None = None
    _process: KernelProcess | None = None
    _link_: KernelLink | None = None
    _ready_task: asyncio.Future[None] | None = None
    #: The kernel's folder in main1 and the host folder its session mounts (see
    #: :mod:`.workdir`), decided in pre_launch.
    _workdir: Workdir = home("")
    #: The event loop the engine, the link and the process handle belong to.
    _loop: asyncio.AbstractEventLoop | None = None
    #: Set when those were left on another loop: the kernel is to be re-attached.
    _moved = False
    #: Whether the kernel manager tells this provisioner when it gives the kernel up.
    _hears_death = False
    #: What the kernel manager asked the kernel: "end", "restart", or "" (see :meth:`poll`).
    _ending = ""
    #: Removing the containers but main1 while the kernel exits (see shutdown_requested).
    _early: asyncio.Task[None] | None = None

    # -- helpers -------------------------------------------------------------------

    @property
    def engine(self) -> Engine[Any]:
        """The engine: ``jupyter_cluster_config`` files, then the kernel manager's config."""
        if self._engine is None:
            self._engine = make_engine(self, self._engine_config())
            self._loop = asyncio.get_running_loop()
        return self._engine

    def _engine_config(self) -> Config:
        """``jupyter_cluster_config`` files, overridden by the kernel manager's config
        (read once per provisioner: the engine and the launch settings share it)."""
        if self._config is None:
            self._config = Config(file_config())
            self._config.merge(self.config)
        return self._config

    @property
    def _link(self) -> KernelLink:
        """The route to the kernel in main1 (made on first use)."""
        if self._link_ is None:
            self._link_ = KernelLink(self.parent, self.kernel_id, self.engine.main_route())
        return self._link_

    def _reached(self, reached: Reached) -> KernelProcess:
        """Keep the handle on the kernel, and the connection info if it changed."""
        if reached.connection is not None:
            self.connection_info = reached.connection
        self._process = reached.process
        return reached.process

    async def _launch_session(self, cmd: list[str], env: dict[str, str]) -> Session:
        """Launch a new session, starting the kernel in main1 as early as possible
        (see :func:`~.session_launch.launch_session`); on any failure the session is
        cancelled or removed before the exception propagates."""

        def submitted(session: Session) -> None:
            self.session_id = session.id

        engine = self.engine
        gate = engine.launch_gate(launch_settings(self._engine_config(), self.log))
        # a client of the shared service asks only for what was set: its defaults do the rest
        remote = getattr(engine, "http", None) is not None
        fields = self.given_fields() if remote else self.launch_fields()
        if self._workdir.mount:  # the notebook's data folder (see .workdir)
            fields["mounts"] = [*fields["mounts"], self._workdir.mount]
        try:
            with launching() as stop:  # given up if the server stops meanwhile
                return await launch_session(
                    engine,
                    fields,
                    self.launch_timeout,
                    lambda s: self._start_kernel(s, cmd, env),
                    submitted,
                    self.log,
                    workdir=self._workdir.host_root,
                    quota=gate.quota(local_owner()),
                    early_start=self._link.route.starts_early,
                    stop=stop,
                )
        except BaseException:
            await self.cleanup(restart=False)
            raise

    async def _start_kernel(self, s: Session, cmd: list[str], env: dict[str, str]) -> None:
        """Start the kernel in main1 of ``s``, a session being launched (as soon as
        main1 runs, while the kernel manager is connected to it: see KernelLink)."""
        env = {**self._link.route.kernel_env(s), **env}

        async def start(process: KernelProcess) -> None:
            link = self._link
            connection = kernel_side_connection(self.parent, link.transport, link.kernel_ip)
            await process.start(cmd, connection, env=env, cwd=self._workdir.cwd)
            await process.confirm_start()  # a command main1 cannot run fails the start now

        self._reached(await self._link.launched(s, start))

    async def _here(self) -> None:
        """Make sure the engine, link and process handle belong to the running loop.

        A kernel manager may drive its provisioner from more than one event loop:
        jupyter_server's synchronous ``MappingKernelManager`` starts kernels on one
        runner loop but, at server stop, shuts them down from a runner nested in it,
        while the first is blocked. Docker and SSH connections cannot cross loops, so
        what was made on another loop is left to it (closed there when it runs again)
        and made anew here; the kernel itself is re-attached by its pid file.
        """
        loop = asyncio.get_running_loop()
        if self._loop is None or self._loop is loop:
            self._loop = loop
            return
        old, self._loop = self._loop, loop
        engine, link, process, ready = self._engine, self._link_, self._process, self._ready_task
        self._engine, self._link_, self._process, self._ready_task = None, None, None, None
        self._moved = process is not None
        close_on_loop(old, engine, link, process, ready)

    async def _handle(self) -> KernelProcess | None:
        """The kernel process handle, re-attached if it was left on another loop."""
        await self._here()
        if self._moved and self.session_id is not None:
            self._moved = False
            session = await self.engine.get(self.session_id)
            self._reached(await self._link.reattach(session, self.connection_info))
        return self._process

    # -- KernelProvisionerBase -------------------------------------------------------

    @property
    def has_process(self) -> bool:
        """Whether a kernel process is known (started, re-attached, or to re-attach)."""
        return self._process is not None or self._moved

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
        drive = kwargs.pop(DRIVE_KWARG, None)  # a notebook in Lab's data-folders drive
        if attach:
            self.session_id = attach
        env = self._kernel_env()
        if self.session_id is None:
            if isinstance(drive, str):
                self._workdir = await self.drive_workdir(self.engine, drive, None)
            else:
                self._workdir = self.new_session_workdir(self.engine, kwargs)
            self._note_workdir(env)
            await self._launch_session(cmd, env)
        else:
            session = await self.engine.get(self.session_id)
            if session.status not in USABLE:
                raise ClusterError(f"cluster session {session.name} is {session.status.value}")
            if isinstance(drive, str):
                self._workdir = await self.drive_workdir(self.engine, drive, session)
            else:
                self._workdir = self.running_session_workdir(self.engine, session, kwargs)
            self._note_workdir(env)
            self._reached(await self._link.attach(session, self.connection_info))
            env = {**self._link.route.kernel_env(session), **env}
        return {**kwargs, "cmd": cmd, "env": env}

    def _kernel_env(self) -> dict[str, str]:
        """The kernelspec's environment, plus whether the kernel freezes its start-up
        objects (see ``gc_freeze_startup``)."""
        env = dict(self.kernel_spec.env or {})
        if not self.gc_freeze_startup:
            env[GC_FREEZE_ENV] = "0"
        return env

    def _note_workdir(self, env: dict[str, str]) -> None:
        """Put why the kernel does not start in its notebook's folder (if so) into
        ``env``, for its first output, and the server's log."""
        if self._workdir.note:
            self.log.info("cluster kernel %s: %s", self.kernel_id, self._workdir.note)
            env[NOTE_ENV] = self._workdir.note

    async def launch_kernel(self, cmd: list[str], **kwargs: Any) -> KernelConnectionInfo:
        """Run the kernel as ``work`` in main1 (unless already started) and hand back
        host-side connection info."""
        assert self._process is not None
        if not self._process.started:
            await self._process.start(
                cmd,
                kernel_side_connection(self.parent, self._link.transport, self._link.kernel_ip),
                env=kwargs.get("env") or {},
                cwd=self._workdir.cwd,
            )
            await self._process.confirm_start()
        self._time_kernel_ready()
        return self.connection_info

    def _time_kernel_ready(self) -> None:
        """Record the session's ``kernel_ready`` phase (see core.timings) in the
        background, once per session (not on restarts, not in team mode)."""
        if self.session_id is None:
            return
        session = self.engine.phase_missing(self.session_id, "kernel_ready")
        if session is None:
            return
        self._ready_task = asyncio.ensure_future(self._record_kernel_ready(session))

    async def _record_kernel_ready(self, session: Session) -> None:
        """Keep the session's ``kernel_ready`` timing (see :mod:`.kernel_ready`)."""
        seconds = await kernel_ready_seconds(
            session, self.connection_info, self.launch_timeout, self.log
        )
        if seconds is not None and self._engine is not None:
            self._engine.record_phases(session.id, {"kernel_ready": seconds})

    async def post_launch(self, **kwargs: Any) -> None:
        """Ask the kernel manager to say when it gives the kernel up (see :meth:`_dead`)."""
        await super().post_launch(**kwargs)
        if not self._hears_death and self.parent is not None:
            self.parent.add_restart_callback(self._dead, "dead")
            self._hears_death = self.parent._restarter is not None

    def _dead(self) -> None:
        """The kernel died and its manager gave up restarting it: a server then drops
        the kernel without shutting it down (a local kernel's process is gone by then),
        so its session is ended here."""
        if self.session_id is not None:
            self.log.warning("the kernel died for good: ending cluster session %s", self.session_id)
            in_background(self.cleanup(restart=False))

    async def shutdown_requested(self, restart: bool = False) -> None:
        """The kernel manager asked the kernel to end: from now on :meth:`poll`
        answers its end as it happens (see :data:`SHUTDOWN_POLL`), or at once when
        it need not be waited for (:meth:`_ends_in_background`)."""
        self._ending = "restart" if restart else "end"
        await self._here()
        if self._early is None and self._ends_for_good() and not self._ends_in_background():
            # The kernel's own exit takes a while: remove the other containers meanwhile.
            assert self.session_id is not None
            self._early = removing_subs(self.engine, self.session_id)

    def _ends_for_good(self) -> bool:
        """Whether the kernel was asked to end with its session (not a restart, and
        not a stopping server's kernel whose session stays)."""
        return self._ending == "end" and not self.keep_session and self.session_id is not None

    def _ends_in_background(self) -> bool:
        """Whether the kernel, asked to end for good, ends with its session in the
        background (a server's kernels, ``end_session_in_background``, unless the
        server stops): shutdown_kernel then returns without waiting for the kernel's
        own exit, which the background ending awaits before removing the containers
        (see :func:`~.endings.kernel_ended`)."""
        return self._ends_for_good() and self.end_session_in_background and not stopping()

    async def poll(self) -> int | None:
        """``KernelManager.is_alive``: None while the kernel runs, else its exit code.

        Once a shutdown was requested, jupyter_client polls every 0.1 s until the
        kernel has ended; each poll then waits up to :data:`SHUTDOWN_POLL` for the
        kernel's ``docker exec`` to end, so its end is seen at once, not at the next
        poll (the wait is cut short, never the kernel, when the manager gives up).
        A kernel that ends in the background counts as ended (code 0 if still exiting).
        """
        process = await self._handle()
        if process is None:
            return None
        if self._ends_in_background():
            code = await process.poll()
            return 0 if code is None else code
        return await process.poll(SHUTDOWN_POLL if self._ending else 0.0)

    async def wait(self) -> int | None:
        """Wait for the kernel process to end (shutdown); its exit code (at once for
        a kernel that ends in the background, see :meth:`poll`)."""
        process = await self._handle()
        if process is None:
            return 0
        if self._ends_in_background():
            return await self.poll()
        return await process.wait()

    async def send_signal(self, signum: int) -> None:
        """``KernelManager.signal_kernel`` / interrupt: signal the kernel in main1."""
        process = await self._handle()
        if process is not None:
            await process.signal(signum)

    async def kill(self, restart: bool = False) -> None:
        """SIGKILL the kernel process (the containers stay until cleanup)."""
        await self.send_signal(signal.SIGKILL)

    async def terminate(self, restart: bool = False) -> None:
        """SIGTERM the kernel process (the containers stay until cleanup)."""
        await self.send_signal(signal.SIGTERM)

    async def cleanup(self, restart: bool = False) -> None:
        """Forget the kernel process; unless restarting, terminate the whole session."""
        await self._here()
        self._moved = False
        background = self._ends_in_background()
        self._ending = ""
        early, self._early = self._early, None
        if self._ready_task is not None:  # a restart before the first answer, too
            self._ready_task.cancel()
            await asyncio.gather(self._ready_task, return_exceptions=True)
            self._ready_task = None
        process, self._process = self._process, None
        if restart:
            if process is not None:
                await process.close()
            return
        link, self._link_ = self._link_, None
        grace = float(getattr(self.parent, "shutdown_wait_time", 5.0))
        ended = partial(kernel_ended, process if background else None, link, grace)
        if not background and process is not None:
            await process.close()
        session_id, self.session_id = self.session_id, None
        engine, self._engine = self._engine, None
        if session_id is None or self.keep_session:
            await ended()
            if engine is not None:
                await engine.close()
            return
        engine = engine or self._engine_for_cleanup()
        try:  # removes main1 while the early removal of the others ends (it waits for it)
            await end_session(engine, session_id, self.end_session_in_background, ended)
        finally:
            if early is not None and early.get_loop() is asyncio.get_running_loop():
                await early

    def _engine_for_cleanup(self) -> Engine[Any]:
        """The engine, made now if this provisioner never needed it (then closed by
        :func:`~.endings.end_session`)."""
        engine = self.engine
        self._engine = None
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
        if self.session_id:
            session = await self.engine.get(self.session_id)
            self._reached(await self._link.reattach(session, self.connection_info))
