"""Batch jobs: run a session's command in main1, watch it, end the session with its result.

:class:`JobRunner` drives one batch session once it runs: it claims the next try in
the store (:func:`.store.jobs.change_job`, so two watchers never both start it),
starts the command in main1 as ``work`` with the session's environment, detached
from the exec that started it, and polls for its exit code; then it records the
result (trying again while ``retries`` allow) and terminates the session with a
reason saying how the job ended. The command's output goes to main1's log (kept
when the session ends, like any log).

Inside main1 each try has a directory ``$RT/run/job-N``: made with ``mkdir`` before
the command starts, so a try whose directory exists is never started again (not
by a second watcher, not by a restarted one), and the command's exit code is
written there when it ends. Whoever watches only needs the store and that file:
the detached CLI driver (:mod:`jupyter_cluster.cli.driver`), a Jupyter server or
the shared service (:class:`BatchUpkeep`), or a driver started again after its
predecessor died (``jupyter cluster wait`` starts one) all pick up where the job is.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from ..core import naming
from ..core.batch import FINISHED, Job, JobState
from ..core.models import Container, Session
from ..core.state import ENDED, USABLE, ContainerStatus
from ..errors import ClusterError
from .agents.base import not_running_reason
from .agents.pool import AgentPool
from .lifetime import LifetimeWatch, Terminate
from .store.jobs import change_job
from .store.sessions import Store

log = logging.getLogger(__name__)
#: What ``$JC_JOB_DIR`` is for try N.
JOB_DIR = naming.RUNTIME_DIR + "/run/job-{}"
#: Starts the try once (mkdir is the claim), detached, its output into main1's log.
START = (
    r"""mkdir "$JC_JOB_DIR" 2>/dev/null || exit 0
nohup setsid sh -c '
c=$JC_JOB_COMMAND; d=$JC_JOB_DIR; n=$JC_JOB_TRY
unset JC_JOB_COMMAND JC_JOB_DIR JC_JOB_TRY
echo "jupyter-cluster: batch job try $n started"
sh -c "$c" </dev/null
rc=$?
echo "jupyter-cluster: batch job try $n exited with code $rc"
echo "$rc" >"$d/exit.tmp" && mv "$d/exit.tmp" "$d/exit"
' >"""
    + naming.RUNTIME_DIR
    + """/run/log.fifo 2>&1 </dev/null &
"""
)
#: Says ``missing`` before the try started, its exit code once it ended, else nothing.
PROBE = r"""if [ ! -d "$JC_JOB_DIR" ]; then echo missing
elif [ -f "$JC_JOB_DIR/exit" ]; then cat "$JC_JOB_DIR/exit"; fi"""


class JobRunner:
    """Runs and watches batch jobs of ``store``'s sessions on ``pool``'s agents."""

    def __init__(
        self,
        store: Store,
        pool: AgentPool,
        terminate: Terminate,
        lifetimes: LifetimeWatch,
        *,
        interval: Callable[[], float] = lambda: 1.0,
        logger: logging.Logger | None = None,
    ) -> None:
        self.store = store
        self.pool = pool
        self.terminate = terminate
        self.lifetimes = lifetimes
        self.interval = interval
        self.log = logger or log

    async def run(self, session_id: str) -> Session:
        """Watch the job of ``session_id`` until its session has ended; the ended session."""
        while True:
            session = self.store.require(session_id)
            if session.status in ENDED:
                return self._ended(session)
            if session.status in USABLE:
                await self.step(session)
            await asyncio.sleep(self.interval())

    def _ended(self, session: Session) -> Session:
        """An ended session whose job had no result keeps why it stopped."""
        if session.job is not None and session.job.state not in FINISHED:
            why, now = session.status_reason or session.status.value, time.time()
            change_job(self.store, session.id, lambda j: j.stopped(why, now))
        return self.store.require(session.id)

    async def step(self, session: Session) -> None:
        """One look at the job: enforce the lifetime, start a try, or read its end."""
        if await self.lifetimes.check(session) is not None:
            return
        job = session.job or Job()
        if job.state in FINISHED:  # its watcher stopped before ending the session
            await self._end(session, job)
        elif job.state is JobState.WAITING:
            tried = len(job.tries)
            down = await self._down(session)
            if down:  # a try would fail for that alone (e.g. mpirun cannot reach sub2)
                await self._give_up(session, tried, "; ".join(down))
                return
            claimed = change_job(
                self.store,
                session.id,
                lambda j: (
                    j.start_try(time.time())
                    if j.state is JobState.WAITING and len(j.tries) == tried
                    else None
                ),
            )
            if claimed is not None and claimed.current is not None:
                self.log.info("session %s: batch job try %d", session.name, claimed.current.number)
                await self._exec(session, claimed.current.number, START)
        elif job.current is not None:
            await self._poll(session, job.current.number)

    async def _down(self, session: Session) -> list[str]:
        """``HOST why`` of each container of ``session`` known not to run: marked
        EXITED by reconciliation, or gone or stopped per its agent now (a try that
        failed because a sub was killed ends before reconciliation sees it). One whose
        agent cannot be asked counts as running: the try goes ahead, as before."""

        async def why(container: Container) -> str | None:
            if container.status is ContainerStatus.EXITED:
                return f"{container.host} {container.status_reason or 'exited'}"
            if container.agent is None or container.container_id is None:
                return None
            try:
                state = await self.pool.get(container.agent).inspect_container(
                    container.container_id
                )
            except (ClusterError, OSError, asyncio.TimeoutError):
                return None
            said = not_running_reason(state)
            return None if said is None else f"{container.host} {said}"

        found = await asyncio.gather(*(why(c) for c in session.containers))
        return [w for w in found if w is not None]

    async def _give_up(self, session: Session, tried: int, why: str) -> None:
        """End the job instead of its next try: FAILED with the last try's exit code
        (``given_up``), or STOPPED when no try ran yet."""

        def give_up(j: Job) -> Job | None:
            if j.state is not JobState.WAITING or len(j.tries) != tried:
                return None  # another watcher moved it meanwhile
            if j.tries:
                return j.given_up(why)
            return j.stopped(f"batch job not started: {why}", time.time())

        new = change_job(self.store, session.id, give_up)
        if new is not None:
            self.log.warning("session %s: batch job not tried again: %s", session.name, why)
            await self._end(session, new)

    async def _poll(self, session: Session, number: int) -> None:
        main = session.containers[0]
        if main.status is not ContainerStatus.RUNNING:
            why = f"main1 stopped ({main.status_reason or main.status.value})"
            new = change_job(self.store, session.id, lambda j: j.stopped(why, time.time()))
            await self._end(session, new or Job())
            return
        out = await self._exec(session, number, PROBE)
        if out == "missing":  # claimed, but its watcher died before starting it
            await self._exec(session, number, START)
            return
        if not out.strip().lstrip("-").isdigit():
            return
        code = int(out.strip())
        retries = session.spec.retries

        def record(j: Job) -> Job | None:
            current = j.current
            if j.state is not JobState.RUNNING or current is None or current.number != number:
                return None
            return j.after_exit(code, retries, time.time())

        new = change_job(self.store, session.id, record)
        if new is None:
            return
        self.log.info("session %s: batch job try %d exited with %d", session.name, number, code)
        if new.state in FINISHED:
            await self._end(session, new)

    async def _end(self, session: Session, job: Job) -> None:
        reason = job.end_reason() if job.state is not JobState.STOPPED else job.reason
        try:
            await self.terminate(session.id, reason)
        except ClusterError as exc:  # another watcher may be ending it too
            self.log.warning("could not end batch session %s: %s", session.name, exc)

    async def _exec(self, session: Session, number: int, script: str) -> str:
        """Run ``script`` in main1 as work with the job's variables; its output ("" if
        main1 cannot be reached now: the next poll tries again)."""
        main = session.containers[0]
        if not main.agent or not main.container_id:
            return ""
        env = {
            **naming.container_env(session, main),
            "JC_JOB_DIR": JOB_DIR.format(number),
            "JC_JOB_TRY": str(number),
            "JC_JOB_COMMAND": session.spec.command or "",
        }
        chunks: list[bytes] = []
        try:
            agent = self.pool.get(main.agent)
            await agent.exec(
                main.container_id,
                ["sh", "-c", script],
                env=env,
                on_output=lambda stream, data: chunks.append(data),
            )
        except ClusterError as exc:
            self.log.warning("session %s: could not reach main1 for its job: %s", session.name, exc)
            return ""
        return b"".join(chunks).decode(errors="replace").strip()


class BatchUpkeep:
    """A long-running server's (or the shared service's) part in batch jobs and
    time limits: every ``interval()`` seconds it sweeps lifetimes and starts a
    :meth:`JobRunner.run` for each running batch session it does not watch yet
    (after a restart, too: reconciliation's picking up of jobs)."""

    def __init__(
        self,
        runner: JobRunner,
        *,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        self.runner = runner
        self.on_change = on_change
        self._task: asyncio.Task[None] | None = None
        self._jobs: dict[str, asyncio.Task[Session]] = {}

    def start(self) -> None:
        """Start in the background (idempotent)."""
        if self._task is None:
            self._task = asyncio.ensure_future(self._loop())

    async def stop(self) -> None:
        """Stop watching; the jobs run on in main1 and the next watcher picks them up."""
        tasks = [t for t in (self._task, *self._jobs.values()) if t is not None]
        self._task, self._jobs = None, {}
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _loop(self) -> None:
        while True:
            try:
                await self.tick()
            except Exception as exc:  # never let one bad pass end the upkeep
                self.runner.log.warning("batch upkeep: %s", exc)
            await asyncio.sleep(self.runner.interval())

    async def tick(self) -> None:
        """One pass: end sessions past their limit, watch new running batch sessions."""
        if await self.runner.lifetimes.sweep() and self.on_change is not None:
            self.on_change()
        self._jobs = {sid: t for sid, t in self._jobs.items() if not t.done()}
        for session in self.runner.store.list():
            if session.spec.command and session.status in USABLE and session.id not in self._jobs:
                self._jobs[session.id] = asyncio.ensure_future(self.runner.run(session.id))
