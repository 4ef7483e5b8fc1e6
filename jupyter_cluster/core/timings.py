"""Where a launch spent its time: the phases of every launch, in seconds.

A session's ``timings`` (in its JSON, ``jupyter cluster show``) maps each phase
that has ended to its duration. The phases, always in this order:

``queue``
    from the submission until the placement attempt that placed it began (the
    time spent PENDING, waiting for room);
``place``
    that attempt: the store's transaction and the scheduler;
``network``
    creating the session's private network (meanwhile the agents are asked whether
    they have the image, and those that lack it start pulling it);
``pull``
    from then until the image is on every agent the session was placed on (about 0
    when every agent had it);
``create``, ``files``, ``start``
    creating the containers, copying their start-up files in, starting them
    (subs start once main1 has; with restricted egress, until the rules are set).
    main1 of a session on one agent is created and filled while the network is
    made (see ``bring_up``): its ``create`` is then moving it onto the network,
    and its ``files`` about 0;
``ssh_ready``
    until every container's start-up script has reached the user's part: the
    bootstrap command, or, without one, sshd listening (the container is ready);
``bootstrap``
    until every container is ready (bootstrap done and sshd listening; about 0
    without a bootstrap command) and, for a session on several agents, main1
    reaches the others' SSH ports across the overlay; the session is then RUNNING;
``kernel_ready``
    until the kernel in main1 answers ``kernel_info``, after the session is RUNNING
    (0 when it answered before: a provisioner starts it early). Only for sessions
    with a kernel started by a local provisioner or the server.

The containers of a session go through their phases concurrently, so each phase
from ``create`` on is measured between milestones: from when every container had
ended the previous phase until every container has ended this one. The phases
never overlap, are never negative, and add up to the time from submission until
the session was RUNNING (its kernel ready).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping

#: Every phase, in order (stable names: they are part of the session's JSON).
PHASES = (
    "queue",
    "place",
    "network",
    "pull",
    "create",
    "files",
    "start",
    "ssh_ready",
    "bootstrap",
    "kernel_ready",
)
#: The phases each container goes through, timed per container.
CONTAINER_PHASES = ("create", "files", "start", "ssh_ready", "bootstrap")

log = logging.getLogger(__name__)


def ordered(timings: Mapping[str, float]) -> dict[str, float]:
    """``timings`` in phase order, unknown names dropped, rounded to the millisecond."""
    return {p: round(float(timings[p]), 3) for p in PHASES if p in timings}


def elapsed_until_running(created_at: float, timings: Mapping[str, float]) -> float:
    """The wall-clock time (epoch seconds) the session became RUNNING, per its phases."""
    return created_at + sum(v for p, v in timings.items() if p != "kernel_ready")


class LaunchClock:
    """The milestones of one session's containers while it is brought up.

    :meth:`mark` is called as each container ends a phase; a phase ends for the
    session when its last container ends it, and is then logged (debug) and kept
    in :attr:`timings`. Containers must mark their phases in order.
    """

    def __init__(self, session_id: str, hosts: list[str]) -> None:
        self.session_id = session_id
        self.hosts = frozenset(hosts)
        self.timings: dict[str, float] = {}
        self._done: dict[str, set[str]] = {p: set() for p in CONTAINER_PHASES}
        self._last = time.monotonic()

    def phase(self, name: str, seconds: float) -> None:
        """A session-wide phase (``queue``, ``place``, ``network``, ``pull``) took
        ``seconds``."""
        self.timings[name] = max(0.0, seconds)
        log.debug("session %s: phase %s took %.3f s", self.session_id, name, seconds)

    def network_done(self, started: float) -> None:
        """The network (begun at monotonic ``started``) exists: containers start now."""
        self._last = time.monotonic()
        self.phase("network", self._last - started)

    def pull_done(self) -> None:
        """Every placed agent has the image (pulled since the network was made)."""
        now = time.monotonic()
        self.phase("pull", now - self._last)
        self._last = now

    def extend(self, phase: str) -> None:
        """The time since the last phase ended belongs to ``phase`` too (the last one
        that ended: e.g. main1 checking it reaches the other agents' containers)."""
        now = time.monotonic()
        self.timings[phase] = self.timings.get(phase, 0.0) + max(0.0, now - self._last)
        self._last = now

    def mark(self, host: str, phase: str) -> None:
        """``host`` has ended ``phase``; ends it for the session with the last host."""
        done = self._done[phase]
        done.add(host)
        if done >= self.hosts and phase not in self.timings:
            # Earlier phases end no later than this one: a container ends its phases
            # in order, so every host has ended them too.
            for earlier in CONTAINER_PHASES[: CONTAINER_PHASES.index(phase)]:
                if earlier not in self.timings:
                    self._finish(earlier)
            self._finish(phase)

    def _finish(self, phase: str) -> None:
        now = time.monotonic()
        self.phase(phase, now - self._last)
        self._last = now
