"""Waiting for a condition, synchronously (:func:`wait_for`) or in a loop (:func:`eventually`).

Both poll a probe until it returns something truthy and fail the test with the same
message when the time is up: ``timed out after T s waiting for WHAT`` (with
``; last seen: …`` when the caller says what it last saw).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest


class _Deadline:
    """The end of a wait, and the one failure message of both ways of waiting."""

    def __init__(self, timeout: float, what: str, seen: Callable[[], Any] | None) -> None:
        self.timeout, self.what, self.seen = timeout, what, seen
        self.end = time.monotonic() + timeout

    def check(self) -> None:
        """Fail the test if the time is up."""
        if time.monotonic() > self.end:
            last = f"; last seen: {self.seen()}" if self.seen is not None else ""
            pytest.fail(f"timed out after {self.timeout:g} s waiting for {self.what}{last}")


def wait_for(
    probe: Callable[[], Any],
    timeout: float,
    what: str,
    interval: float = 0.5,
    seen: Callable[[], Any] | None = None,
) -> Any:
    """Call ``probe()`` until it returns something truthy (returned); fail after ``timeout``.

    ``seen()``, if given, describes the last state in the failure message.
    """
    deadline = _Deadline(timeout, what, seen)
    while not (value := probe()):
        deadline.check()
        time.sleep(interval)
    return value


async def eventually(
    probe: Callable[[], Awaitable[Any]],
    timeout: float,
    what: str,
    interval: float = 0.2,
    seen: Callable[[], Any] | None = None,
) -> Any:
    """Await ``probe()`` until it returns something truthy (returned); fail after ``timeout``.

    ``seen()``, if given, describes the last state in the failure message.
    """
    deadline = _Deadline(timeout, what, seen)
    while not (value := await probe()):
        deadline.check()
        await asyncio.sleep(interval)
    return value
