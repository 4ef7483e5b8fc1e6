"""The error of a network that Docker will not remove: who is on it, or that nobody is.

:func:`~jupyter_cluster.engine.agents.network_in_use.in_use_message` is shared by the
Docker agent and the fake; the agent contract checks the first case on both, and
the terminator's tests the second through the fake.
"""

from __future__ import annotations

from jupyter_cluster.engine.agents.network_in_use import ACTIVE_ENDPOINTS, in_use_message


def test_containers_still_on_the_network_are_named_with_how_to_free_it() -> None:
    message = in_use_message("gpu1", "jc-1234", ["visitor", "jc-1234-main1"])
    assert message.startswith("agent gpu1: removing network jc-1234 failed: ")
    assert ACTIVE_ENDPOINTS in message
    assert "jc-1234-main1, visitor still on it" in message  # sorted, so stable
    assert "docker network disconnect jc-1234 CONTAINER" in message
    assert "restart" not in message


def test_a_network_with_no_container_on_it_says_to_restart_docker_on_that_agent() -> None:
    message = in_use_message("gpu1", "jc-1234", [])
    assert message.startswith("agent gpu1: removing network jc-1234 failed: ")
    assert ACTIVE_ENDPOINTS in message
    assert "lists no container on it" in message
    assert message.endswith("restart Docker on agent gpu1, then try again")
    assert "disconnect" not in message
