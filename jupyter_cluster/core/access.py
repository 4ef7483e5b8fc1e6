"""How a session's owner reaches its containers over SSH: main1's endpoint and the keys.

Made by ``ClusterManager.access`` (from the agent's address, main1's published
SSH port and the stored key material) and served to the owner by the shared
service (``GET sessions/{id}/access``); the terminals, ``exec`` and the kernel
of a user's server in team mode use it (``jupyter_cluster.client.shell``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


def public_material(material: Mapping[str, str]) -> dict[str, str]:
    """What the owner needs of a session's keys: the user key pair and every host's
    public key (never a host's private key)."""
    return {
        k: v
        for k, v in material.items()
        if k in ("user", "user.pub") or (k.startswith("host:") and k.endswith(".pub"))
    }


@dataclass(frozen=True)
class Access:
    """main1's SSH endpoint as the owner's machine reaches it, and the key material."""

    address: str
    port: int
    keys: Mapping[str, str]

    def to_dict(self) -> dict[str, Any]:
        return {"address": self.address, "port": self.port, "keys": dict(self.keys)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Access:
        return cls(str(data["address"]), int(data["port"]), public_material(data["keys"]))
