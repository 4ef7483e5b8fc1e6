"""The shared service's one scheduling loop places several users' waiting sessions in
queue order, on the real JupyterHub of the ``hub`` fixture.

bob fills the service's agent; alice's launch, then bob's second, wait (each driven by
the service, not by a process of the user's). Their reasons say their place in the
queue. When room for one of them appears, the one ahead (alice's) is placed and bob's
becomes first; when room appears again his runs. Launches go through each user's own
server with their own token, as the Lab's do.
"""

from __future__ import annotations

from typing import Any

from tests.support.constants import API
from tests.support.waiting import wait_for

from .support import Hub, end_sessions, launch, ok, status, wait_running


def _free_cpu(hub: Hub, user: str, token: str) -> tuple[float, float]:
    """The service's one agent's CPUs: (capacity, free), as a user's server shows them."""
    (agent,) = ok(hub.server_call(user, "GET", f"{API}/agents", token)).json()
    return float(agent["capacity"]["cpu"]), float(agent["free"]["cpu"])


def _waits(hub: Hub, user: str, token: str, sid: str, place: str) -> dict[str, Any]:
    """Wait until session ``sid`` is PENDING with a reason that names its ``place``
    ("1st", "2nd") in the queue; its model."""
    seen: dict[str, Any] = {}

    def queued() -> bool:
        seen.update(status(hub, user, token, sid))
        assert seen["status"] in ("PENDING",), seen
        return str(seen.get("status_reason", "")).startswith(f"{place} in the queue")

    wait_for(queued, 60, f"session {sid} to be {place} in the queue", seen=lambda: seen)
    return seen


def _end(hub: Hub, user: str, token: str, sid: str) -> None:
    ok(hub.server_call(user, "DELETE", f"{API}/sessions/{sid}", token), 200, 202, 204)


def test_waiting_sessions_of_two_users_are_placed_in_queue_order(
    hub: Hub, team: dict[str, str]
) -> None:
    alice, bob = team["alice"], team["bob"]
    capacity, free = _free_cpu(hub, "bob", bob)
    assert free >= 1.0, f"the hub tests' agent should be idle here: {free} of {capacity} free"
    body = {"size": 1, "mem": "256m"}
    try:
        filler = launch(hub, "bob", bob, {**body, "cpu": free})
        wait_running(hub, "bob", bob, filler["id"])
        first = launch(hub, "alice", alice, {**body, "cpu": free / 2})
        ahead = _waits(hub, "alice", alice, first["id"], "1st")
        assert "waiting for one agent" in ahead["status_reason"], ahead
        second = launch(hub, "bob", bob, {**body, "cpu": free})
        behind = _waits(hub, "bob", bob, second["id"], "2nd")
        # Names are per owner: bob learns he waits behind someone, not her session's name.
        assert (
            "waiting behind 1 earlier session(s) (next: another user's session)"
            in (behind["status_reason"])
        ), behind

        # Room for alice's session only: the service's loop places the first in line,
        # and bob's becomes first (it needs all the agent's room).
        _end(hub, "bob", bob, filler["id"])
        wait_running(hub, "alice", alice, first["id"])
        now_first = _waits(hub, "bob", bob, second["id"], "1st")
        assert "waiting for one agent" in now_first["status_reason"], now_first

        _end(hub, "alice", alice, first["id"])
        wait_running(hub, "bob", bob, second["id"])
    finally:
        end_sessions(hub, "alice", alice)
        end_sessions(hub, "bob", bob)
