"""The example's per-user caps (security review X9), on the real Hub it configures.

``examples/team/jupyterhub_config.py`` starts the service with caps derived from the
host: each user holds at most half its CPUs and memory, in at most 4 sessions, and a
session's containers together get at most half of the host's process ids. Here bob
asks for more CPUs than his share and is refused with the cap named, while a session
within it starts and its containers carry the example's process limit.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.support.constants import API, SMALL_BODY
from tests.support.docker import inspect, session_objects

from .support import Hub, end_sessions, launch, wait_running

#: What the example derives from this host (see ``site_limits`` there).
CPU_CAP = max((os.cpu_count() or 1) / 2, 1.0)
PIDS_LIMIT = max(int(Path("/proc/sys/kernel/pid_max").read_text()) // 32, 64)


def test_one_user_cannot_take_the_whole_machine(hub: Hub, team: dict[str, str]) -> None:
    bob = team["bob"]
    greedy = {**SMALL_BODY, "size": 3, "cpu": CPU_CAP / 2}  # 1.5 times his share
    try:
        reply = hub.server_call("bob", "POST", f"{API}/sessions", bob, json=greedy)
        assert reply.status_code == 409, reply.text
        assert f"over the limit of {CPU_CAP:g}" in reply.json()["message"], reply.text
        assert end_sessions(hub, "bob", bob) == []  # nothing was stored for the refused one

        session = launch(hub, "bob", bob, {**SMALL_BODY, "size": 2})
        wait_running(hub, "bob", bob, session["id"])
        containers, _ = session_objects(session["id"])
        assert len(containers) == 2
        limits = {c["HostConfig"]["PidsLimit"] for c in inspect(*containers)}
        assert limits == {PIDS_LIMIT}, limits
    finally:
        end_sessions(hub, "bob", bob)
