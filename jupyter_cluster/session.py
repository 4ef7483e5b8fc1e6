"""The Python API for notebooks and scripts: ``ClusterSession``.

``ClusterSession.launch(size=3, cpu=0.5, mem="512m")`` and friends call the engine
(:func:`~jupyter_cluster.config.make_engine`) in this process, configured from the usual Jupyter
config files. Every operation has an async form (``alaunch``, ``alogs``, …) and a
sync twin that also works inside a running notebook event loop: all engine work
runs on one private event loop in a background thread, which owns the Docker
connections. The ``%cluster`` magic and the launch form are built on this.
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from .background_engine import BackgroundEngine
from .config import local_owner
from .core.launch_check import LaunchCheck
from .core.models import LaunchSpec, Session
from .core.naming import MAIN_HOST
from .core.ssh_client import shell_words
from .core.state import SessionStatus
from .core.stats import Usage
from .engine.api import Engine

T = TypeVar("T")


def engine() -> Engine[Any]:
    """The process-wide engine used by the API, the magic and the form."""
    return BackgroundEngine.get().engine


def launch_schema() -> dict[str, Any]:
    """The launch-options schema (as ``GET cluster/api/launch-options`` serves it),
    built from this process's configuration: its own launch settings with a local
    engine, the shared service's form in team mode."""
    eng = BackgroundEngine.get()
    return eng.call(eng.gate().options(local_owner()))  # with their own launch profiles


def agents() -> builtins.list[dict[str, Any]]:
    """Capacity, allocated and free resources per agent."""
    eng = BackgroundEngine.get()
    return eng.call(eng.engine.agents_info())


async def dry_run(spec: LaunchSpec) -> LaunchCheck:
    """The engine's dry run of ``spec`` for this process's user, to be awaited on the
    engine's loop; :class:`ClusterSession`'s checks and the launch form's line on
    room (``widgets_room``) ask it."""
    return await engine().check(spec, owner=local_owner())


@dataclass(frozen=True)
class ExecResult:
    """What ``ClusterSession.exec`` returns."""

    exit_code: int
    stdout: str
    stderr: str


class ClusterSession:
    """A cluster session seen from Python: launch, inspect, logs, exec, terminate."""

    def __init__(self, session: Session) -> None:
        self._session = session

    # -- creating and finding --------------------------------------------------------

    @classmethod
    async def alaunch(cls, *, wait: bool = True, **fields: Any) -> ClusterSession:
        """Launch with the CLI's parameters (image, size, mode, cpu, mem, shm, gpu,
        mounts, resource_group, name, bootstrap, env); waits until RUNNING unless
        ``wait=False``. Raises :class:`~jupyter_cluster.errors.ClusterError`."""
        eng = BackgroundEngine.get()

        async def go() -> Session:
            spec = eng.engine.make_spec(**fields)
            session = await eng.engine.submit(spec, owner=local_owner())
            if not wait:
                eng.loop.create_task(eng.engine.drive(session.id))
                return session
            return await eng.engine.drive(session.id)

        return cls(await eng.acall(go()))

    @classmethod
    def launch_spec(
        cls, spec: LaunchSpec, *, on_change: Callable[[Session], None] | None = None
    ) -> ClusterSession:
        """Launch an already validated spec and wait; ``on_change`` sees each step."""
        eng = BackgroundEngine.get()

        async def go() -> Session:
            session = await eng.engine.submit(spec, owner=local_owner())
            return await eng.engine.drive(session.id, on_change=on_change)

        return cls(eng.call(go()))

    @classmethod
    def launch(cls, *, wait: bool = True, **fields: Any) -> ClusterSession:
        """Sync twin of :meth:`alaunch`."""
        return BackgroundEngine.get().call(cls.alaunch(wait=wait, **fields))

    @classmethod
    async def acheck(cls, **fields: Any) -> LaunchCheck:
        """A dry run of :meth:`alaunch` with the same parameters: whether it would start
        now and where (``starts_now``, ``placement``), or why it would wait
        (``reason``); raises what the launch would raise; makes nothing."""
        eng = BackgroundEngine.get()

        async def go() -> LaunchCheck:
            return await dry_run(eng.engine.make_spec(**fields))

        return await eng.acall(go())

    @classmethod
    def check(cls, **fields: Any) -> LaunchCheck:
        """Sync twin of :meth:`acheck`."""
        return BackgroundEngine.get().call(cls.acheck(**fields))

    @classmethod
    def check_spec(cls, spec: LaunchSpec) -> LaunchCheck:
        """A dry run of :meth:`launch_spec`: an already validated spec."""
        return BackgroundEngine.get().call(dry_run(spec))

    @classmethod
    async def aattach(cls, ref: str) -> ClusterSession:
        """An existing session by id, unique id prefix or name."""
        eng = BackgroundEngine.get()
        return cls(await eng.acall(eng.engine.get(ref)))

    @classmethod
    def attach(cls, ref: str) -> ClusterSession:
        """Sync twin of :meth:`aattach`."""
        return BackgroundEngine.get().call(cls.aattach(ref))

    @classmethod
    def list(cls, include_ended: bool = False) -> builtins.list[ClusterSession]:
        """Sessions of this store (active ones, or all with ``include_ended``)."""
        eng = BackgroundEngine.get()
        return [cls(s) for s in eng.call(eng.engine.list(include_ended=include_ended))]

    # -- properties --------------------------------------------------------------------

    @property
    def id(self) -> str:
        return self._session.id

    @property
    def name(self) -> str:
        return self._session.name

    @property
    def hosts(self) -> builtins.list[str]:
        """``['main1', 'sub1', …]``."""
        return self._session.hosts

    @property
    def model(self) -> Session:
        """The last fetched session model (see :meth:`refresh`)."""
        return self._session

    @property
    def status(self) -> SessionStatus:
        """The current status, read fresh from the store."""
        return self.refresh().status

    def refresh(self) -> Session:
        """Re-read the session from the store."""
        eng = BackgroundEngine.get()
        self._session = eng.call(eng.engine.get(self.id))
        return self._session

    def to_dict(self) -> dict[str, Any]:
        return self._session.to_dict()

    def __repr__(self) -> str:
        s = self._session
        return f"<ClusterSession {s.name} {s.status.value} hosts={','.join(s.hosts)}>"

    # -- logs, exec, terminate --------------------------------------------------------

    async def alogs(
        self, host: str = MAIN_HOST, *, tail: int | None = None, follow: bool = False
    ) -> AsyncIterator[str]:
        """Lines of one container's log (main1's by default, as the CLI's ``logs``);
        with ``follow``, until it ends."""
        eng = BackgroundEngine.get()
        queue: asyncio.Queue[str | BaseException | None] = asyncio.Queue()
        caller = asyncio.get_running_loop()

        async def pump() -> None:
            try:
                async for line in eng.engine.logs(self.id, host, tail=tail, follow=follow):
                    caller.call_soon_threadsafe(queue.put_nowait, line)
            except BaseException as exc:  # handed to the caller's loop
                caller.call_soon_threadsafe(queue.put_nowait, exc)
            caller.call_soon_threadsafe(queue.put_nowait, None)

        future = eng.submit(pump())
        try:
            while (item := await queue.get()) is not None:
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            future.cancel()

    def logs(self, host: str = MAIN_HOST, *, tail: int | None = None, follow: bool = False) -> str:
        """Sync twin: the log text (with ``follow``, printed as it comes, until it ends
        or the kernel is interrupted, and returned at the end)."""
        eng = BackgroundEngine.get()
        if not follow:

            async def collect() -> str:
                return "".join([line async for line in eng.engine.logs(self.id, host, tail=tail)])

            return eng.call(collect())
        lines: builtins.list[str] = []

        async def printing() -> None:
            async for line in eng.engine.logs(self.id, host, tail=tail, follow=True):
                lines.append(line)
                print(line, end="", flush=True)

        future = eng.submit(printing())
        try:
            future.result()
        except KeyboardInterrupt:
            future.cancel()
        return "".join(lines)

    async def aexec(self, host: str, cmd: builtins.list[str] | str) -> ExecResult:
        """Run a command as ``work`` in one container and collect its output."""
        argv = shell_words([cmd]) if isinstance(cmd, str) else builtins.list(cmd)
        out: builtins.list[bytes] = []
        err: builtins.list[bytes] = []

        def collect(stream: int, data: bytes) -> None:
            (err if stream == 2 else out).append(data)

        eng = BackgroundEngine.get()
        code = await eng.acall(eng.engine.exec(self.id, host, argv, on_output=collect))
        return ExecResult(
            code, b"".join(out).decode(errors="replace"), b"".join(err).decode(errors="replace")
        )

    def exec(self, host: str, cmd: builtins.list[str] | str) -> ExecResult:
        """Sync twin of :meth:`aexec`."""
        return BackgroundEngine.get().call(self.aexec(host, cmd))

    async def aexec_all(self, cmd: builtins.list[str] | str) -> dict[str, ExecResult]:
        """Run a command as ``work`` in every container at once; each host's result."""
        hosts = self.hosts
        results = await asyncio.gather(*(self.aexec(h, cmd) for h in hosts))
        return dict(zip(hosts, results, strict=True))

    def exec_all(self, cmd: builtins.list[str] | str) -> dict[str, ExecResult]:
        """Sync twin of :meth:`aexec_all`."""
        return BackgroundEngine.get().call(self.aexec_all(cmd))

    async def astats(self) -> dict[str, Usage | None]:
        """Each container's CPU, memory, network and block IO now (None: not running)."""
        eng = BackgroundEngine.get()
        return await eng.acall(eng.engine.stats(self.id))

    def stats(self) -> dict[str, Usage | None]:
        """Sync twin of :meth:`astats`."""
        return BackgroundEngine.get().call(self.astats())

    async def aterminate(self) -> Session:
        """Remove every container and the network (or cancel if PENDING)."""
        eng = BackgroundEngine.get()
        self._session = await eng.acall(eng.engine.terminate(self.id))
        return self._session

    def terminate(self) -> Session:
        """Sync twin of :meth:`aterminate`."""
        return BackgroundEngine.get().call(self.aterminate())
