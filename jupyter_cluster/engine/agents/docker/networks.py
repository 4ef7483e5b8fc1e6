"""Networks on a Docker engine: a session's made, joined, listed and removed.

A mixin of :class:`~.agent.DockerAgent`; called through the agent protocol by the
launch (:mod:`~jupyter_cluster.engine.launch.session_network` makes a session's
network, :mod:`~jupyter_cluster.engine.launch.creating` moves main1 and the carrier
onto it), by :mod:`~jupyter_cluster.engine.launch.teardown` and the warm pool
(removal). A removal Docker refuses because of active endpoints says which
containers are still on the network, or that none is (see :mod:`..network_in_use`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aiodocker.networks import DockerNetwork

from ....errors import AgentError
from ..base import DEFAULT_BRIDGE, NetworkState
from ..network_in_use import ACTIVE_ENDPOINTS, in_use_message
from .connection import DockerConnection
from .models import label_filter, network_config, network_state


class DockerNetworks:
    """``create_network``, ``move_to_network``, ``list_networks`` and
    ``remove_network`` of the Docker agent."""

    connection: DockerConnection

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
        """A bridge network, or an attachable Swarm overlay (IPsec-encrypted if asked),
        with the interfaces' MTU if given (0: Docker's default) and a bridge's Linux
        name if given."""
        config = network_config(
            name, labels, overlay=overlay, encrypted=encrypted, mtu=mtu, bridge_name=bridge_name
        )
        conn = self.connection
        network = await conn.call(f"creating network {name}", conn.client.networks.create(config))
        return str(network.id)

    async def move_to_network(
        self, container_id: str, network: str, aliases: Sequence[str]
    ) -> None:
        """Move a created container from the default bridge to ``network`` (with
        ``aliases``) before it starts; Docker makes its endpoints only at start."""
        conn = self.connection
        short = container_id[:12]
        bridge = DockerNetwork(conn.client, DEFAULT_BRIDGE)
        joined = DockerNetwork(conn.client, network)
        await conn.call(
            f"moving container {short} off the default bridge",
            bridge.disconnect({"Container": container_id}),
        )
        await conn.call(
            f"connecting container {short} to network {network}",
            joined.connect(
                {"Container": container_id, "EndpointConfig": {"Aliases": list(aliases)}}
            ),
        )

    async def list_networks(self, labels: Mapping[str, str]) -> list[NetworkState]:
        """Networks carrying all of ``labels``."""
        conn = self.connection
        found = await conn.call(
            "listing networks", conn.client.networks.list(filters=label_filter(labels))
        )
        return [network_state(n) for n in found]

    async def remove_network(self, name_or_id: str) -> None:
        """Remove a network; a missing one is not an error. One that Docker says has
        active endpoints is an error naming the containers on it, or saying that
        none is."""
        conn = self.connection
        action = f"removing network {name_or_id}"
        network = await conn.call(action, conn.client.networks.get(name_or_id), missing=None)
        if network is None:
            return
        try:
            await conn.call(action, network.delete(), missing=None)
        except AgentError as exc:
            if ACTIVE_ENDPOINTS in exc.message:
                raise await self._in_use(network, name_or_id, exc) from exc
            # A Swarm overlay removed through another node meanwhile: Docker says
            # "not found" with a 500 on this one.
            if "not found" not in exc.message:
                raise

    async def _in_use(self, network: DockerNetwork, name: str, refusal: AgentError) -> AgentError:
        """The error for a local network Docker would not remove: ``refusal`` as it
        is if the network is gone meanwhile or is a Swarm overlay (whose containers
        on other nodes this node does not list), else one naming who is on it."""
        conn = self.connection
        try:
            shown: dict[str, Any] | None = await conn.call(
                f"inspecting network {name}", network.show(), missing=None
            )
        except AgentError:
            return refusal
        if shown is None or shown.get("Scope") != "local":
            return refusal
        attached = (shown.get("Containers") or {}).items()
        users = [str(c.get("Name") or cid[:12]) for cid, c in attached]
        agent = conn.config.id
        return AgentError(in_use_message(agent, str(shown.get("Name") or name), users), agent)
