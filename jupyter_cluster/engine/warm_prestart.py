"""How a warm container waits, and how its main1 imports ipykernel ahead.

Used by :mod:`.warm_pool` when it makes a set's containers: their first process is
:data:`WAIT_SCRIPT` (the launch that takes the set tells it to go, see
:mod:`.launch.warm_adoption`), and main1 first starts ``runtime/prestart.py``.
"""

from __future__ import annotations

import logging
from importlib.resources import files as package_files

from ..asyncwait import within
from ..core import naming
from ..core.kernel_command import FROZEN_OFF
from ..errors import AgentError
from .agents.base import Agent
from .launch.warm_adoption import WARM_ENV_FILE, WARM_GO_FIFO

log = logging.getLogger(__name__)
PRESTART = f"{naming.RUNTIME_DIR}/prestart.py"
#: Lines runtime/prestart.py prints (in the container's log) once it is ready or not.
PRESTART_READY = "jupyter-cluster: kernel interpreter ready"
PRESTART_NOT_READY = "jupyter-cluster: no kernel interpreter ahead"
#: Seconds a warm main1 may take to import ipykernel ahead.
PRESTART_TIMEOUT = 120.0
#: A warm container's first process: wait for the signal, then be a normal container.
WAIT_SCRIPT = (
    f"mkdir -p -m 0700 {WARM_GO_FIFO.rsplit('/', 1)[0]} && mkfifo -m 0600 {WARM_GO_FIFO} && "
    f'read -r go <{WARM_GO_FIFO} && [ "$go" = go ] && set -a && . {WARM_ENV_FILE} && '
    f"set +a && exec /bin/sh {naming.RUNTIME_DIR}/start.sh"
)


# main1 first starts, as work, an interpreter that imports ipykernel ahead and waits
# for its kernel (runtime/prestart.py; the kernel's start-up hands it over); with the
# interpreter options of the kernel command it stands for (core.kernel_command's
# WARM_KERNEL_WORDS), since they cannot change once it runs. Without
# python3 or setpriv in the image, kernels start the usual way.
def prestart_script(uid: int) -> str:
    """The warm main1's prestart, as work with ``uid`` (ContainerHardening.work_uid)."""
    owner = f"{uid}:{uid}"
    return (
        f"if command -v python3 >/dev/null && command -v setpriv >/dev/null; then "
        f"mkdir -p -m 0700 {naming.PRESTART_DIR} && chown {owner} {naming.PRESTART_DIR} && "
        f"mkfifo -m 0600 {naming.PRESTART_DIR}/go && chown {owner} {naming.PRESTART_DIR}/go && "
        f"(setpriv --reuid={uid} --regid={uid} --clear-groups python3 {FROZEN_OFF} {PRESTART} "
        f"</dev/null 2>&1 &); else echo '{PRESTART_NOT_READY}: no python3 or setpriv'; fi; "
    )


def prestart_code() -> bytes:
    return (package_files("jupyter_cluster.runtime") / "prestart.py").read_bytes()


async def prestarted(agent: Agent, container_id: str) -> None:
    """Wait until a warm main1's kernel interpreter is ready (or known not to be)."""

    async def follow() -> None:
        async for line in agent.logs(container_id, follow=True):
            if line.startswith(PRESTART_NOT_READY):
                log.warning("jupyter-cluster: warm main1 %s: %s", container_id[:12], line.strip())
                return
            if line.startswith(PRESTART_READY):
                return
        raise AgentError(f"warm container {container_id[:12]} exited", agent.id)

    await within(follow(), PRESTART_TIMEOUT)
