"""The engine of a notebook or script process, on an event loop of its own.

The Python API (:mod:`jupyter_cluster.session`), the ``%cluster`` magic and the
launch form call the engine from a notebook, whose own event loop may be running
(a sync call could not wait on it there) or from plain scripts. So one engine per
process lives on a private event loop in a daemon thread, which owns its Docker
connections; callers submit coroutines to it and wait on the result (``call``) or
await it from their own loop (``acall``). It is closed at interpreter exit.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar

from .config import file_config, launch_settings, make_engine
from .engine.api import Engine, LaunchGate

T = TypeVar("T")


class BackgroundEngine:
    """The engine and the background loop it lives on (one per process)."""

    _lock = threading.Lock()
    _instance: BackgroundEngine | None = None

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
    def get(cls) -> BackgroundEngine:
        """The process's one instance, made (with its engine started) on first use."""
        with cls._lock:
            if cls._instance is None:
                cls._instance = cls()
            return cls._instance

    @classmethod
    def discard(cls) -> None:
        """Close the process's instance, if made; the next use makes a new one (for a
        benchmark whose Jupyter dirs, and so the engine's store, are about to go)."""
        with cls._lock:
            instance, cls._instance = cls._instance, None
        if instance is not None:
            instance.close()

    def submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        """Schedule ``coro`` on the engine loop from any thread."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the engine loop and wait for it (sync twins)."""
        return self.submit(coro).result()

    async def acall(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the engine loop, awaited from any other loop (async forms)."""
        return await asyncio.wrap_future(self.submit(coro))
