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

from collections.abc import Awaitable, Callable
from typing import Any

from tornado import web

from ..errors import ClusterError
from .handlers.base import status_for
from .kernel_start_wrap import Start, started, wrap_start_kernel

#: Marks a wrapped ``start_kernel`` (so wrapping twice does nothing).
_MARK = "_jupyter_cluster_refusals"


def explain_refusals(km: Any) -> None:
    """Wrap ``km.start_kernel`` (see the module docstring); idempotent."""

    def around(start: Start) -> Callable[..., Awaitable[Any]]:
        async def start_kernel(*args: Any, **kwargs: Any) -> Any:
            try:
                return await started(start, *args, **kwargs)
            except ClusterError as exc:
                raise web.HTTPError(status_for(exc), str(exc)) from exc

        return start_kernel

    wrap_start_kernel(km, _MARK, around)
