"""The kernel process inside main1: start, poll, signal, wait.

Used by :class:`~jupyter_cluster.provisioning.provisioner.ClusterProvisioner`. The kernel runs
as ``work`` through an attached ``docker exec``, so its end is noticed the moment
it happens (poll/wait need no round trip). Its stdout/stderr go to a FIFO that the
start-up script copies into the container's log. A pid file lets a re-attached
server signal and poll a kernel it did not start.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
from collections.abc import Mapping, Sequence

from ..core import naming
from ..core.kernel_command import WARM_KERNEL_WORDS, kernel_argv, kernel_env
from ..core.lines import printable
from ..engine.agents.base import Executor
from ..errors import AgentError, ClusterError
from .kernel_death import start_mark

RUN_DIR = naming.RUN_DIR
LOG_FIFO = naming.LOG_FIFO
# $0 is a label; "$@" the kernel's argv. A kernel started while main1 is still
# starting up first waits (30 s at most) for the start-up script's FIFO (and so for
# its run directory): redirecting to a path that does not exist yet would make a
# plain file and lose the output. A command that main1 cannot run fails here, on
# the exec's own stderr, as a local kernel's start fails, and so does a working
# directory (JC_CWD, see core.workdir) that main1 lacks. Then it writes the pid
# file (before exec, so the pid is the kernel's own) and the connection file, which
# comes in the environment rather than through a separate copy into the container,
# and is not passed on; it says on its stdout that the kernel starts, and execs it.
#: Printed by the wrapper on the exec's stdout as the kernel's command starts.
STARTING = "jupyter-cluster: the kernel starts"
_WRAPPER = (
    f'i=0; until [ -p "{LOG_FIFO}" ]; do '
    'i=$((i+1)); [ "$i" -gt 1500 ] && exit 125; sleep 0.02; done; '
    'command -v "$1" >/dev/null 2>&1 || '
    '{ echo "$1: no such command in main1 (looked in PATH=$PATH)" >&2; exit 127; }; '
    'cd "$JC_CWD" 2>/dev/null || '
    '{ echo "the kernel\'s folder $JC_CWD is not in main1" >&2; exit 126; }; '
    'echo $$ > "$JC_PID_FILE"; '
    '(umask 077; printf %s "$JC_CONNECTION" > "$JC_CONNECTION_FILE") || exit 126; '
    f'printf "%s\\n" "$JC_LOG_MARK" >>"{LOG_FIFO}"; '
    "unset JC_CONNECTION JC_CONNECTION_FILE JC_PID_FILE JC_CWD JC_LOG_MARK; "
    f'echo "{STARTING}"; exec "$@" >>"{LOG_FIFO}" 2>&1'
)
PRESTART_DIR = naming.PRESTART_DIR
# When main1 came from the warm pool, an interpreter with ipykernel imported waits
# there: hand it the kernel (one JSON message) instead of starting python, then stay
# attached until that process ends. The FIFO is opened read-write so a dead reader
# can never block the write; whether the reader lives is checked just before.
_HANDOFF = (
    f'if [ -p "{PRESTART_DIR}/go" ] && [ "$1 $2 $3 $4" = "{" ".join(WARM_KERNEL_WORDS)}" ] '
    f'&& kill -0 "$(cat {PRESTART_DIR}/pid 2>/dev/null)" 2>/dev/null; then '
    f'printf "%s\\n" "$JC_LOG_MARK" >>"{LOG_FIFO}"; '
    f'exec 3<>"{PRESTART_DIR}/go" && printf %s "$JC_HANDOFF" >&3 && exec 3>&- || exit 124; '
    f'unset JC_HANDOFF JC_CONNECTION JC_CWD JC_LOG_MARK; echo "{STARTING}"; '
    'i=0; until [ -s "$JC_PID_FILE" ]; do '
    'i=$((i+1)); [ "$i" -gt 1500 ] && exit 125; sleep 0.02; done; '
    'p=$(cat "$JC_PID_FILE"); while kill -0 "$p" 2>/dev/null; do sleep 0.1; done; exit 0; '
    "fi; unset JC_HANDOFF; "
)
#: Most bytes of the wrapper's own output kept (its error message, if any).
SAID_MAX = 8192
#: The kernel's user as uid:gid, so it can be started before start.sh has added
#: ``work`` to an image that lacks it.
KERNEL_USER = f"{naming.WORK_UID}:{naming.WORK_UID}"  # unless the route says otherwise
#: "0" in the kernel's environment: the extension leaves its garbage collector as is
#: (runtime/incluster.py's GC_FREEZE_ENV, which must be the same).
GC_FREEZE_ENV = "JUPYTER_CLUSTER_GC_FREEZE"


class KernelProcess:
    """One kernel process in a container, seen from the server."""

    def __init__(
        self, agent: Executor, container_id: str, kernel_id: str, user: str = KERNEL_USER
    ) -> None:
        self.agent = agent
        self.user = user
        self.container_id = container_id
        self.kernel_id = kernel_id
        self.connection_file = self.connection_path(kernel_id)
        self.pid_file = f"{RUN_DIR}/kernel-{naming.kernel_file_id(kernel_id)}.pid"
        self._task: asyncio.Task[int] | None = None
        self._said = bytearray()  # what the wrapper wrote before the kernel started
        self._starting = asyncio.Event()

    @staticmethod
    def connection_path(kernel_id: str) -> str:
        """Where the kernel's connection file is inside the container (any kernel id:
        the name is :func:`~jupyter_cluster.core.naming.kernel_file_id`'s, safe in
        shell scripts)."""
        return f"{RUN_DIR}/kernel-{naming.kernel_file_id(kernel_id)}.json"

    @property
    def started(self) -> bool:
        """Whether :meth:`start` ran on this handle (False for a re-attached kernel)."""
        return self._task is not None

    async def start(
        self,
        cmd: Sequence[str],
        connection: bytes,
        env: Mapping[str, str],
        cwd: str = naming.WORK_HOME,
    ) -> None:
        """Start ``cmd`` as work through an attached exec (the container must run).

        ``connection`` is the kernel's connection file, written by the wrapper
        (mode 0600, owned by work) just before it runs ``cmd``; ``cwd`` its working
        directory in main1 (see core.workdir).
        """
        cmd = kernel_argv(cmd)  # as a local kernel runs (see core.kernel_command)
        environment = kernel_env(env, naming.PYTHON_DIR)
        handoff = {
            "argv": cmd,
            "env": environment,
            "cwd": cwd,
            "log": LOG_FIFO,
            "pid_file": self.pid_file,
            "connection_file": self.connection_file,
            "connection": connection.decode(),
        }
        self._said.clear()
        self._starting.clear()
        self._task = asyncio.ensure_future(
            self.agent.exec(
                self.container_id,
                ["/bin/sh", "-c", _HANDOFF + _WRAPPER, "jupyter-cluster-kernel", *cmd],
                on_output=self._heard,
                user=self.user,
                env={
                    **environment,
                    "JC_PID_FILE": self.pid_file,
                    "JC_CWD": cwd,
                    "JC_CONNECTION_FILE": self.connection_file,
                    "JC_CONNECTION": connection.decode(),
                    "JC_HANDOFF": json.dumps(handoff),
                    # main1's log: where the kernel's output begins (see kernel_death)
                    "JC_LOG_MARK": start_mark(self.kernel_id),
                },
            )
        )

    def _heard(self, stream: int, data: bytes) -> None:
        """The wrapper's own output (the kernel's goes to main1's log)."""
        if len(self._said) < SAID_MAX:
            self._said += data[: SAID_MAX - len(self._said)]
        if STARTING.encode() in self._said:
            self._starting.set()

    async def confirm_start(self, timeout: float = 60.0) -> None:
        """Return once the kernel's command is starting in main1; raise ClusterError,
        with what the wrapper said, if it could not start (e.g. no such command). A
        start neither confirmed nor failed within ``timeout`` is left to the kernel
        manager's own checks."""
        assert self._task is not None, "start() first"
        said = asyncio.ensure_future(self._starting.wait())
        try:
            first = asyncio.FIRST_COMPLETED
            await asyncio.wait({said, self._task}, timeout=timeout, return_when=first)
        finally:
            said.cancel()
        if self._starting.is_set() or not self._task.done():
            return
        failed = self._task.cancelled() or self._task.exception() is not None
        code = -1 if failed else self._task.result()
        text = printable(self._said.decode(errors="replace")).strip() or "it wrote nothing"
        raise ClusterError(
            f"the kernel could not start in main1 (exit code {code}): {text}; see the "
            "kernelspec's argv and `jupyter cluster logs SESSION main1`"
        )

    async def _sh(self, script: str) -> int:
        return await self.agent.exec(self.container_id, ["/bin/sh", "-c", script])

    async def poll(self, within: float = 0.0) -> int | None:
        """None while the kernel runs, else its exit code. With ``within`` (seconds),
        a kernel this handle started that is still running is given that long to
        end, and its end is answered the moment it happens (a shutdown's polls)."""
        if self._task is not None:
            if not self._task.done() and within > 0:
                await asyncio.wait({self._task}, timeout=within)  # never cancels it
            if not self._task.done():
                return None
            if self._task.cancelled() or self._task.exception() is not None:
                return -1
            return self._task.result()
        try:
            alive = await self._sh(f'kill -0 "$(cat "{self.pid_file}")" 2>/dev/null')
        except AgentError:
            return -1
        return None if alive == 0 else 1

    async def wait(self) -> int:
        """Wait until the kernel process ends; its exit code."""
        if self._task is not None:
            with contextlib.suppress(AgentError):
                return await asyncio.shield(self._task)
            return -1
        while (code := await self.poll()) is None:
            await asyncio.sleep(0.2)
        return code

    async def signal(self, signum: int) -> None:
        """Send ``signum`` to the kernel (its process group when it leads one)."""
        name = signal.Signals(signum).name.removeprefix("SIG")
        pid_file = self.pid_file
        script = (
            f'for i in 1 2 3 4 5 6 7 8 9 10; do [ -s "{pid_file}" ] && break; sleep 0.1; done; '
            f'p=$(cat "{pid_file}" 2>/dev/null) || exit 0; '
            f"kill -s {name} -- -$p 2>/dev/null || kill -s {name} $p 2>/dev/null; exit 0"
        )
        with contextlib.suppress(AgentError):
            await self._sh(script)

    async def close(self) -> None:
        """Stop watching the process (it should have ended already)."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
        self._task = None
