"""Wrapping ``start_kernel`` of the server's kernel manager, once per purpose.

Used by :mod:`.drive_kernels` (a notebook's drive path) and :mod:`.kernel_refusals`
(refusals with their reason): each wraps this one instance's method (no class is
patched), and wrapping again for the same purpose does nothing.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

#: A ``start_kernel`` that may return a value or an awaitable of it.
Start = Callable[..., Any]


async def started(start: Start, *args: Any, **kwargs: Any) -> Any:
    """Call ``start`` and await its result when it is awaitable."""
    result = start(*args, **kwargs)
    return await result if inspect.isawaitable(result) else result


def wrap_start_kernel(
    km: Any, mark: str, around: Callable[[Start], Callable[..., Awaitable[Any]]]
) -> None:
    """Replace ``km.start_kernel`` with ``around(the current one)`` unless a wrapper
    marked ``mark`` is already in the chain."""
    start = km.start_kernel
    link = start
    while link is not None:
        if getattr(link, mark, False):
            return
        link = getattr(link, "__wrapped__", None)
    wrapped = functools.wraps(start)(around(start))
    setattr(wrapped, mark, True)
    km.start_kernel = wrapped
