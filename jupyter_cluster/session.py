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
import atexit
import builtins
import contextlib
import threading
from collections.abc import AsyncIterator, Callable, Coroutine
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, TypeVar

from .config import file_config, launch_settings, local_owner, make_engine
from .core.models import LaunchSpec, Session
from .core.naming import MAIN_HOST
from .core.ssh_client import shell_words
from .core.state import SessionStatus
from .core.stats import Usage
from .engine.api import Engine, LaunchGate

T = TypeVar("T")


class _Engine:
    """The engine and the background loop it lives on (one per process)."""

    _lock = threading.Lock()
    _instance: _Engine | None = None

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.engine: Engine[Any] = self.call(self._make())
        self._gate: LaunchGate | None = None
        atexit.register(self.close)

    def close(self) -> None:
        """Close the engine's connections (at interpreter exit)."""
        if self.loop.is_running():
            with contextlib.suppress(Exception):
                self.submit(self.engine.close()).result(timeout=5)
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=5)
        if not self.loop.is_running() and not self.loop.is_closed():
            self.loop.close()  # else Python warns of an unclosed event loop at exit

    def gate(self) -> LaunchGate:
        """The launch policy that applies here (the config files are read once)."""
        if self._gate is None:
            self._gate = self.engine.launch_gate(launch_settings(file_config()))
        return self._gate

    @staticmethod
    async def _make() -> Engine[Any]:
        engine = make_engine()
        await engine.start()
        return engine

    @classmethod
    def get(cls) -> _Engine:
        with cls._lock:
            if cls._instance is None:
                cls._instance = cls()
            return cls._instance

    def submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the engine loop and wait for it (sync twins)."""
        return self.submit(coro).result()

    async def acall(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the engine loop, awaited from any other loop (async forms)."""
        return await asyncio.wrap_future(self.submit(coro))


def engine() -> Engine[Any]:
    """The process-wide engine used by the API, the magic and the form."""
    return _Engine.get().engine


def launch_schema() -> dict[str, Any]:
    """The launch-options schema (as ``GET cluster/api/launch-options`` serves it),
    built from this process's configuration: its own launch settings with a local
    engine, the shared service's form in team mode."""
    eng = _Engine.get()
    return eng.call(eng.gate().options(local_owner()))  # with their own launch profiles


def agents() -> builtins.list[dict[str, Any]]:
    """Capacity, allocated and free resources per agent."""
    eng = _Engine.get()
    return eng.call(eng.engine.agents_info())


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
        eng = _Engine.get()

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
        eng = _Engine.get()

        async def go() -> Session:
            session = await eng.engine.submit(spec, owner=local_owner())
            return await eng.engine.drive(session.id, on_change=on_change)

        return cls(eng.call(go()))

    @classmethod
    def launch(cls, *, wait: bool = True, **fields: Any) -> ClusterSession:
        """Sync twin of :meth:`alaunch`."""
        return _Engine.get().call(cls.alaunch(wait=wait, **fields))

    @classmethod
    async def aattach(cls, ref: str) -> ClusterSession:
        """An existing session by id, unique id prefix or name."""
        eng = _Engine.get()
        return cls(await eng.acall(eng.engine.get(ref)))

    @classmethod
    def attach(cls, ref: str) -> ClusterSession:
        """Sync twin of :meth:`aattach`."""
        return _Engine.get().call(cls.aattach(ref))

    @classmethod
    def list(cls, include_ended: bool = False) -> builtins.list[ClusterSession]:
        """Sessions of this store (active ones, or all with ``include_ended``)."""
        eng = _Engine.get()
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
        eng = _Engine.get()
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
        eng = _Engine.get()
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
        eng = _Engine.get()
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

        eng = _Engine.get()
        code = await eng.acall(eng.engine.exec(self.id, host, argv, on_output=collect))
        return ExecResult(
            code, b"".join(out).decode(errors="replace"), b"".join(err).decode(errors="replace")
        )

    def exec(self, host: str, cmd: builtins.list[str] | str) -> ExecResult:
        """Sync twin of :meth:`aexec`."""
        return _Engine.get().call(self.aexec(host, cmd))

    async def aexec_all(self, cmd: builtins.list[str] | str) -> dict[str, ExecResult]:
        """Run a command as ``work`` in every container at once; each host's result."""
        hosts = self.hosts
        results = await asyncio.gather(*(self.aexec(h, cmd) for h in hosts))
        return dict(zip(hosts, results, strict=True))

    def exec_all(self, cmd: builtins.list[str] | str) -> dict[str, ExecResult]:
        """Sync twin of :meth:`aexec_all`."""
        return _Engine.get().call(self.aexec_all(cmd))

    async def astats(self) -> dict[str, Usage | None]:
        """Each container's CPU, memory, network and block IO now (None: not running)."""
        eng = _Engine.get()
        return await eng.acall(eng.engine.stats(self.id))

    def stats(self) -> dict[str, Usage | None]:
        """Sync twin of :meth:`astats`."""
        return _Engine.get().call(self.astats())

    async def aterminate(self) -> Session:
        """Remove every container and the network (or cancel if PENDING)."""
        eng = _Engine.get()
        self._session = await eng.acall(eng.engine.terminate(self.id))
        return self._session

    def terminate(self) -> Session:
        """Sync twin of :meth:`aterminate`."""
        return _Engine.get().call(self.aterminate())
