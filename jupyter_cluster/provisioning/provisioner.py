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

This module is the jupyter_client API of starting the kernel, on two layers: what
every part shares (:mod:`.provisioner_base`: the engine, the route to the kernel,
its process handle) and ending the kernel and its session (:mod:`.kernel_end`,
:mod:`.endings`). The work is in helpers: the launch options (:mod:`.options`),
launching a session (:mod:`.session_launch`), reaching the kernel
(:mod:`.kernel_link`, :mod:`..reach`, :mod:`.process`) and its ``kernel_ready``
timing (:mod:`.kernel_ready`).
"""

from __future__ import annotations

import asyncio
from typing import Any

from jupyter_client.connect import KernelConnectionInfo
from traitlets import Bool

from ..config import launch_settings, local_owner
from ..core.models import Session
from ..core.state import USABLE
from ..core.workdir import SESSION_NAME_ENV, Workdir, home, notebook_in_main1
from ..errors import ClusterError
from ..reach.ports import kernel_side_connection
from .endings import launching
from .kernel_end import KernelEnding
from .kernel_ready import kernel_ready_seconds
from .options import LaunchOptions
from .process import GC_FREEZE_ENV, KernelProcess
from .session_launch import launch_session
from .workdir import DRIVE_KWARG, NOTE_ENV, NotebookDir


# mypy cannot see that jupyter_client's KernelProvisionerMeta derives from MetaHasTraits.
class ClusterProvisioner(LaunchOptions, NotebookDir, KernelEnding):  # type: ignore[metaclass]
    """Provision a kernel inside ``main1`` of a new cluster session."""

    gc_freeze_startup = Bool(
        True,
        config=True,
        help="Once the kernel in main1 has started, move the objects of its start-up "
        "(IPython, ipykernel and their imports) into Python's permanent GC generation "
        "(gc.freeze): collections skip them, and the kernel's exit at shutdown takes "
        "about 0.04 s instead of 0.6 s at 0.5 CPU. Objects made by user code are "
        "collected as before. False leaves the kernel's garbage collector as it is.",
    )
    #: The kernel's folder in main1 and the host folder its session mounts (see
    #: :mod:`.workdir`), decided in pre_launch.
    _workdir: Workdir = home("")

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

    async def pre_launch(self, **kwargs: Any) -> dict[str, Any]:
        """Launch (or, on restart, reuse) the session and prepare the kernel command.

        On a first start the kernel process is already started here (as soon as
        main1 is ready); on a restart :meth:`launch_kernel` starts it.
        """
        # Not km.format_kernel_cmd: it would swap "python3" for the server's interpreter.
        inner = KernelProcess.connection_path(self.kernel_id)
        cmd = [part.replace("{connection_file}", inner) for part in self.kernel_spec.argv]
        cmd += kwargs.pop("extra_arguments", [])
        # The server's environment stays on the server; only the notebook's name
        # (jupyter_server's) is carried over, as main1 sees it (see _note_workdir).
        notebook = (kwargs.pop("env", None) or {}).get(SESSION_NAME_ENV)
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
            self._note_workdir(env, notebook)
            await self._launch_session(cmd, env)
        else:
            session = await self.engine.get(self.session_id)
            if session.status not in USABLE:
                raise ClusterError(f"cluster session {session.name} is {session.status.value}")
            if isinstance(drive, str):
                self._workdir = await self.drive_workdir(self.engine, drive, session)
            else:
                self._workdir = self.running_session_workdir(self.engine, session, kwargs)
            self._note_workdir(env, notebook)
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

    def _note_workdir(self, env: dict[str, str], notebook: str | None) -> None:
        """Put why the kernel does not start in its notebook's folder (if so) into
        ``env``, for its first output, and the server's log; and, as jupyter_server
        tells a local kernel, where its notebook is (``notebook``: the server's
        path), as main1 sees it, when it is there: ipykernel's ``__session__``, and
        what tools such as experiment trackers read to find the notebook."""
        if self._workdir.note:
            self.log.info("cluster kernel %s: %s", self.kernel_id, self._workdir.note)
            env[NOTE_ENV] = self._workdir.note
        inside = notebook_in_main1(self._workdir, notebook)
        if inside is not None:
            env.setdefault(SESSION_NAME_ENV, inside)

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
