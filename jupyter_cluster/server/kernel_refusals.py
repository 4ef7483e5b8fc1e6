"""A cluster kernel refused at start says why through ``POST /api/kernels``.

jupyter_server answers any exception of ``start_kernel`` that is not a tornado
``HTTPError`` with a bare 500 ("Unhandled error" and a traceback), so a kernel the
launch gate or a resource policy refuses (e.g. over the user's session limit) left
Lab's dialog without the reason. :func:`explain_refusals` wraps ``start_kernel`` of
the server's kernel manager (this one instance, like :mod:`.drive_kernels`): an
engine error (:class:`~jupyter_cluster.errors.ClusterError`, raised only by the
cluster provisioner) becomes an ``HTTPError`` with the status the REST API gives
it (400, 403, 404, 409, 429; 502 for Docker's side) and its message. Called once by
the server extension (``ClusterApp.initialize_settings``).
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

from tornado import web

from ..errors import ClusterError
from .handlers.base import status_for

#: Marks a wrapped ``start_kernel`` (so wrapping twice does nothing).
_MARK = "_jupyter_cluster_refusals"


def explain_refusals(km: Any) -> None:
    """Wrap ``km.start_kernel`` (see the module docstring); idempotent."""
    start = km.start_kernel
    if getattr(start, _MARK, False):
        return

    @functools.wraps(start)
    async def start_kernel(*args: Any, **kwargs: Any) -> Any:
        try:
            result = start(*args, **kwargs)
            return await result if inspect.isawaitable(result) else result
        except ClusterError as exc:
            raise web.HTTPError(status_for(exc), str(exc)) from exc

    setattr(start_kernel, _MARK, True)
    km.start_kernel = start_kernel
