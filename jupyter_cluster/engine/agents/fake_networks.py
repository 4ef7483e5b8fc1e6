"""The fake agent's networks: made, listed and removed as Docker would.

A mixin of :class:`~.fake.FakeAgent`: networks carry their labels and driver, their
MTU and bridge name are recorded for tests, and Docker's refusals are reproduced (a
name in use, an overlay off a Swarm manager, removing a network a running container
uses, or one with a stale endpoint).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping

from ...errors import AgentError
from .base import NetworkState
from .fake_container import FakeContainer, has_labels
from .network_in_use import in_use_message


class FakeNetworks:
    """``create_network``/``remove_network``/``list_networks`` kept in :attr:`networks`."""

    containers: dict[str, FakeContainer]
    networks: dict[str, NetworkState]
    mtus: dict[str, int]
    bridges: dict[str, str]
    swarm: str
    swarm_worker: bool
    #: Names of networks with a stale endpoint: refused with no container on them.
    stale_endpoints: set[str]

    @property
    def id(self) -> str:
        raise NotImplementedError

    def _enter(self, method: str, target: str, hostname: str | None = None) -> None:
        raise NotImplementedError

    async def create_network(
        self,
        name: str,
        labels: Mapping[str, str],
        *,
        overlay: bool,
        encrypted: bool = False,
        mtu: int = 0,
        bridge_name: str = "",
    ) -> str:
        """Record a network (its MTU in ``mtus``, its bridge name in ``bridges``); a
        name already in use, or an overlay on an agent that is not a Swarm node
        (``swarm = ""``), is an AgentError, as in Docker."""
        self._enter("create_network", name)
        self.mtus[name] = mtu
        self.bridges[name] = bridge_name
        if any(n.name == name for n in self.networks.values()):
            raise AgentError(f"agent {self.id}: network {name} already exists", self.id)
        if overlay and (not self.swarm or self.swarm_worker):
            raise AgentError(
                f"agent {self.id}: creating network {name} failed: this node is not a swarm "
                "manager (an overlay network needs a Swarm)",
                self.id,
            )
        net_id = uuid.uuid4().hex
        driver = "overlay" if overlay else "bridge"
        self.networks[net_id] = NetworkState(net_id, name, dict(labels), driver)
        return net_id

    async def remove_network(self, name_or_id: str) -> None:
        """Forget a network by name or id; a missing one is fine, one that a running
        container uses, or one in :attr:`stale_endpoints`, is an AgentError (as in
        Docker: it has active endpoints, see :mod:`.network_in_use`)."""
        self._enter("remove_network", name_or_id)
        for net_id, net in list(self.networks.items()):
            if name_or_id not in (net_id, net.name):
                continue
            users = [
                box.spec.name
                for box in self.containers.values()
                if box.status == "running" and box.spec.network in (net_id, net.name)
            ]
            if users or net.name in self.stale_endpoints:
                raise AgentError(in_use_message(self.id, net.name, users), self.id)
            del self.networks[net_id]

    async def list_networks(self, labels: Mapping[str, str]) -> list[NetworkState]:
        """Networks whose labels include all of ``labels``."""
        self._enter("list_networks", "")
        return [n for n in self.networks.values() if has_labels(n.labels, labels)]
