"""Why a network could not be removed, and what to do: the containers still on it, or none.

Docker refuses to remove a network that has active endpoints. Its own message
names none of them, and two quite different causes share it: containers that are
still attached (a session's, being removed meanwhile, or ones that someone joined
to it by hand), or no container at all, when the engine kept a stale endpoint of a
container that is gone (a known Docker fault that only a restart of its daemon
clears). :func:`in_use_message` says which, for the Docker agent
(:mod:`.docker.networks`) and the fake (:mod:`.fake_networks`) alike; the session's
clean-up (:mod:`..launch.teardown`) passes it on to whoever removes the session.
"""

from __future__ import annotations

from collections.abc import Sequence

#: What Docker's refusal says; the messages below keep it, so callers can match it.
ACTIVE_ENDPOINTS = "has active endpoints"


def in_use_message(agent_id: str, network: str, users: Sequence[str]) -> str:
    """The error of removing ``network`` on agent ``agent_id`` while Docker says it
    has active endpoints; ``users``: the names of the containers listed on it."""
    failed = f"agent {agent_id}: removing network {network} failed: it {ACTIVE_ENDPOINTS}"
    if users:
        return (
            f"{failed}: {', '.join(sorted(users))} still on it; remove those containers or "
            f"disconnect them (docker network disconnect {network} CONTAINER), then try again"
        )
    return (
        f"{failed}, although Docker lists no container on it: a stale endpoint of a "
        "container that is gone, which Docker drops only when its daemon restarts; "
        f"restart Docker on agent {agent_id}, then try again"
    )
