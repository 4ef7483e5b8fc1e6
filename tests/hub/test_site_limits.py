"""The example's per-user caps (security review X9), on the real Hub it configures.

``examples/team/jupyterhub_config.py`` starts the service with caps derived from the
host: each user holds at most half its CPUs and memory, in at most 4 sessions, and a
session's containers together get at most half of the host's process ids. The hub
tests override two of them on the service's command line (their own session limit,
and no CPU cap: the Lab e2e makes a launch wait for CPUs), so here bob asks for more
memory than his share and is refused with the cap named, while a session within it
starts and its containers carry the example's process limit.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.support.constants import API, SMALL_BODY
from tests.support.docker import inspect, session_objects

from .support import Hub, end_sessions, launch, wait_running

#: What the example derives from this host (see ``site_limits`` there).
MEM_CAP_GIB = max(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**30 // 2, 1)
PIDS_LIMIT = max(int(Path("/proc/sys/kernel/pid_max").read_text()) // 32, 64)


def test_one_user_cannot_take_the_whole_machine(hub: Hub, team: dict[str, str]) -> None:
    bob = team["bob"]
    each = MEM_CAP_GIB // 2 + 1  # two of them: just over his share, within the agent
    greedy = {**SMALL_BODY, "size": 2, "mem": f"{each}g"}
    try:
        reply = hub.server_call("bob", "POST", f"{API}/sessions", bob, json=greedy)
        assert reply.status_code == 409, reply.text
        message = reply.json()["message"]
        assert f"memory in active cluster sessions over the limit of {MEM_CAP_GIB}g" in message
        assert end_sessions(hub, "bob", bob) == []  # nothing was stored for the refused one

        session = launch(hub, "bob", bob, {**SMALL_BODY, "size": 2})
        wait_running(hub, "bob", bob, session["id"])
        containers, _ = session_objects(session["id"])
        assert len(containers) == 2
        limits = {c["HostConfig"]["PidsLimit"] for c in inspect(*containers)}
        assert limits == {PIDS_LIMIT}, limits
    finally:
        end_sessions(hub, "bob", bob)
