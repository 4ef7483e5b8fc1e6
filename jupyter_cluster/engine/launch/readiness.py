"""Waiting until a container's start-up script says it is ready (or failed).

Called by :mod:`.bring_up` for every container it brings up: follows the
container's log for the start-up script's markers (``naming.READY_MARKER``,
``naming.FAILED_MARKERS``, and :data:`BOOTSTRAP_MARKER`, which ends the
``ssh_ready`` phase), and fails the launch with the log's last lines. For a
session on several agents, :func:`wait_reachable` then waits until main1 reaches
the containers on the other agents across the overlay.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Callable

from ...asyncwait import within
from ...core import naming
from ...core.lines import printable
from ...errors import LaunchFailed
from ..agents.base import Agent

#: Seconds after which, and between which, wait_ready also reads the log's last lines.
POLL_AFTER, POLL_EVERY = 5.0, 3.0
#: Characters kept of each log line quoted in a failed launch's reason.
TAIL_LINE = 400
#: The start-up script's line when the bootstrap command begins (ends ``ssh_ready``).
BOOTSTRAP_MARKER = "jupyter-cluster: running the bootstrap command"


def says(line: str, marker: str) -> bool:
    """Whether the start-up script's ``marker`` is on ``line``: at its start, or after
    the last output of a bootstrap command that did not end its line (the script's
    own line is then glued to it)."""
    return marker in line


async def wait_ready(
    agent: Agent,
    container_id: str,
    host: str,
    timeout: float,
    on_bootstrap: Callable[[], None] | None = None,
) -> None:
    """Follow a container's log until the start-up script says ready.

    ``on_bootstrap`` is called when the bootstrap command begins. Raises
    :class:`LaunchFailed` with the tail of the log if the container exits first
    (e.g. a failed bootstrap) or the timeout passes.
    """
    tail: collections.deque[str] = collections.deque(maxlen=15)

    async def follow() -> bool:
        async for line in agent.logs(container_id, follow=True):
            tail.append(printable(line.rstrip("\n"))[:TAIL_LINE])  # small, no escapes
            if on_bootstrap is not None and says(line, BOOTSTRAP_MARKER):
                on_bootstrap()
            if says(line, naming.READY_MARKER):
                return True
            if any(says(line, m) for m in naming.FAILED_MARKERS):
                return False
        return False

    async def poll() -> bool:
        # A followed log can stall when Docker rotates it under a flood (seen with
        # Docker 20.10): after a while, also look at the log's last lines.
        await asyncio.sleep(POLL_AFTER)
        while True:
            async for line in agent.logs(container_id, tail=20):
                if says(line, naming.READY_MARKER):
                    return True
                if any(says(line, m) for m in naming.FAILED_MARKERS):
                    return False
            await asyncio.sleep(POLL_EVERY)

    async def either() -> bool:
        tasks = [asyncio.ensure_future(follow()), asyncio.ensure_future(poll())]
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            return next(iter(done)).result()
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    try:
        ready = await within(either(), timeout)
    except asyncio.TimeoutError:
        raise LaunchFailed(
            f"{host} was not ready within {timeout:g} s; its log ends with:\n" + "\n".join(tail)
        ) from None
    if not ready:
        raise LaunchFailed(f"{host} failed during start-up; its log ends with:\n" + "\n".join(tail))


#: Run in main1 as work: waits until every host given answers on the SSH port.
_REACH_SCRIPT = """
import socket, sys, time
port, deadline, left = int(sys.argv[1]), time.monotonic() + float(sys.argv[2]), sys.argv[3:]
while left and time.monotonic() < deadline:
    for host in list(left):
        try:
            socket.create_connection((host, port), 1).close()
            left.remove(host)
        except OSError:
            pass
    if left:
        time.sleep(0.2)
print(" ".join(left))
sys.exit(1 if left else 0)
"""


async def wait_reachable(
    agent: Agent, main_id: str, hosts: list[str], agents: list[str], timeout: float
) -> None:
    """Wait until main1 (``main_id`` on ``agent``) reaches the SSH port of each of
    ``hosts`` (containers on other agents, across the overlay); right after an agent's
    engine restarts, the overlay may take a moment. Raises :class:`LaunchFailed`
    naming those it could not reach after ``timeout`` seconds."""
    said = bytearray()

    def heard(_: int, data: bytes) -> None:
        said.extend(data[:4096])

    cmd = ["python3", "-c", _REACH_SCRIPT, str(naming.SSH_PORT), f"{timeout:g}", *hosts]
    code = await agent.exec(main_id, cmd, on_output=heard)
    if code != 0:
        unreached = printable(said.decode(errors="replace")).strip() or " ".join(hosts)
        raise LaunchFailed(
            f"main1 cannot reach {unreached} over the session's network within {timeout:g} s: "
            f"the overlay between agents {', '.join(agents)} may be blocked (TCP 7946, UDP "
            "4789 and 7946 must pass between them)"
        )
