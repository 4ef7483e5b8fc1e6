"""Names of cluster terminals, and a terminal service that keeps them for them.

A terminal into a container is a terminal of the server's own terminal service
(jupyter_server_terminals), so Lab reopens its tab by name after a reload. For a
name it does not find running, Lab's ``terminal:open`` asks ``POST /api/terminals``
for a *new* terminal under that name, which is a shell on the server's host: a
cluster terminal whose shell had ended came back as a host shell in a tab titled
after a container.

So cluster terminals get names of their own, ``cluster_<host>_<session>_<n>``
(plain terminals are numbered), and :func:`keep_cluster_names` makes the terminal
service refuse to create a terminal under such a name unless
:class:`~.terminals.ClusterTerminals` asks (inside :func:`creating_cluster_terminal`).
It wraps ``create`` of the server's one terminal manager instance, as
:mod:`.kernel_refusals` wraps the kernel manager's ``start_kernel``. The server
extension calls it before the server takes requests.
"""

from __future__ import annotations

import contextlib
import contextvars
import re
from collections.abc import Container, Iterator
from typing import Any

from tornado import web

#: A cluster terminal's name (``\\w`` only: the websocket route takes ``(\\w+)``).
_NAME = re.compile(r"cluster_([a-z]+[0-9]+)_([0-9a-f]{12})_([0-9]+)")
#: Marks a wrapped ``create`` (so wrapping twice does nothing).
_MARK = "_jupyter_cluster_keeps_names"
_creating: contextvars.ContextVar[bool] = contextvars.ContextVar("cluster_terminal", default=False)


def is_cluster_name(name: object) -> bool:
    """Whether ``name`` has the form of a cluster terminal's name."""
    return isinstance(name, str) and _NAME.fullmatch(name) is not None


def cluster_terminal_name(host: str, session_id: str, taken: Container[str]) -> str:
    """The first free name ``cluster_<host>_<session>_<n>`` for a terminal into ``host``.

    ``taken`` holds the names in use or used before (a used name is not given
    again while the server runs, so an old tab never reaches a new shell)."""
    short = session_id.replace("-", "")[:12]
    n = 1
    while (name := f"cluster_{host}_{short}_{n}") in taken:
        n += 1
    assert is_cluster_name(name), name
    return name


@contextlib.contextmanager
def creating_cluster_terminal() -> Iterator[None]:
    """Within it, the terminal service creates terminals under cluster names."""
    token = _creating.set(True)
    try:
        yield
    finally:
        _creating.reset(token)


def keep_cluster_names(term_manager: Any) -> None:
    """Make ``term_manager.create`` refuse cluster names outside
    :func:`creating_cluster_terminal` (409, saying what to do); idempotent."""
    if term_manager is None or getattr(term_manager, _MARK, False):
        return
    create = term_manager.create

    def guarded_create(**kwargs: Any) -> Any:
        name = kwargs.get("name")
        match = _NAME.fullmatch(name) if isinstance(name, str) else None
        if match is not None and not _creating.get():
            raise web.HTTPError(
                409,
                f"{name} was a terminal into {match.group(1)} of a cluster session and it "
                "has ended; open a new one from the session's row in the Cluster sidebar "
                "(or POST .../containers/HOST/terminals of the cluster API)",
            )
        return create(**kwargs)

    term_manager.create = guarded_create
    setattr(term_manager, _MARK, True)
