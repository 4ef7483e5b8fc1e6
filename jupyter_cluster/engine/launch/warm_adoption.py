"""Adopting a container of a warm set into a session being launched.

Called by :mod:`.bring_up` for each host whose container comes from a warm set
(:mod:`.warm_pool` made it, waiting on :data:`WARM_GO_FIFO`): the container gets
the session's files and environment, then is told to run the usual start-up
script. :mod:`.warm_pool` builds its waiting command from the paths here.
"""

from __future__ import annotations

import shlex
from collections.abc import Awaitable, Callable

from ...core import naming
from ...core.models import Container, Session
from ...core.state import ContainerStatus
from ...errors import LaunchFailed
from ..agents.base import Agent, FileEntry

#: Where a warm container finds its session's environment, and how it is told to go
#: (its waiting command is :data:`~..warm_prestart.WAIT_SCRIPT`).
WARM_ENV_FILE = f"{naming.RUNTIME_DIR}/env"
WARM_GO_FIFO = "/run/jupyter-cluster-warm/go"
WARM_GO_COMMAND = ("/bin/sh", "-c", f"echo go >{WARM_GO_FIFO}")


async def adopt_warm(
    session: Session,
    container: Container,
    agent: Agent,
    container_id: str,
    files: list[FileEntry],
    progress: Callable[[str, ContainerStatus, str | None], Awaitable[None]],
    mark: Callable[[str, str], None],
) -> None:
    """The warm path: a running container of a warm set (on the session's network
    already, as ``host``) gets the session's files and environment, then runs the
    usual start-up script.

    ``progress`` is the launcher's progress callback, ``mark`` its phase clock's.
    """
    host = container.host
    await progress(host, ContainerStatus.CREATING, container_id)  # ours to remove from now
    mark(host, "create")
    env = naming.container_env(session, container)
    script = "".join(f"{key}={shlex.quote(value)}\n" for key, value in env.items())
    await agent.put_files(container_id, [*files, FileEntry(WARM_ENV_FILE, script.encode(), 0o600)])
    mark(host, "files")
    code = await agent.exec(container_id, WARM_GO_COMMAND, user="root", workdir="/")
    if code != 0:
        raise LaunchFailed(f"{host}: the warm container did not take its start signal ({code})")
    await progress(host, ContainerStatus.STARTING, container_id)
