"""Turning the ``ClusterManager.agents`` configuration into agent objects.

Called once by the manager at construction. Validates each agent dict with a
message naming the bad key and saying what to do, and supplies the default: one
agent, the local Docker engine, in resource group ``default``.

A Docker API reached over the network is root on that host for whoever reaches
it, so ``tcp://`` agents need Docker's TLS client certificates (``tls``); a plain
``tcp://`` URL is refused unless the agent says ``insecure: true`` (the manager
then warns at every start).
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ...core.gpus import DETECT_MODES, GpuProbe
from ...core.units import parse_cpu, parse_size
from ...errors import InvalidRequest
from .agent_config import AgentConfig, TLSFiles

if TYPE_CHECKING:
    from .base import Agent

_KEYS = {
    "id",
    "url",
    "resource_group",
    "address",
    "cpu",
    "mem",
    "gpus",
    "detect_gpus",
    "data_root",
    "tls",
    "insecure",
    "timeout",
    "connect_timeout",
    "kernel_transport",
}
_TLS_KEYS = ("ca", "cert", "key")
KERNEL_TRANSPORTS = ("direct", "ssh")
TLS_HELP = (
    "serve the engine's API with TLS (dockerd --tlsverify --tlscacert ca.pem --tlscert "
    "server-cert.pem --tlskey server-key.pem -H tcp://0.0.0.0:2376, see the README's "
    "'Several hosts') and give this agent tls: {'ca': …, 'cert': …, 'key': …}, its client "
    "certificate; or, on a network you trust completely, set insecure: True"
)


def is_loopback(address: str) -> bool:
    """Whether ``address`` is this machine only (127.0.0.0/8, ::1, localhost)."""
    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def _tls(entry: Mapping[str, Any], where: str) -> TLSFiles | None:
    raw = entry.get("tls")
    if raw is None:
        return None
    if not isinstance(raw, Mapping) or set(raw) != set(_TLS_KEYS):
        raise InvalidRequest(
            f"{where}.tls: give a dict with exactly the keys ca, cert and key (paths of the "
            "CA certificate, the client certificate and its key)",
            "agents",
        )
    for key in _TLS_KEYS:
        if not os.path.isfile(str(raw[key])):
            raise InvalidRequest(f"{where}.tls.{key}: no such file {raw[key]!r}", "agents")
    return TLSFiles(ca=str(raw["ca"]), cert=str(raw["cert"]), key=str(raw["key"]))


def _seconds(entry: Mapping[str, Any], key: str, default: float, where: str) -> float:
    value = entry.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 3600:
        raise InvalidRequest(f"{where}.{key}: give seconds between 0 and 3600", "agents")
    return float(value)


def _detect_gpus(entry: Mapping[str, Any], where: str) -> str:
    """The agent's ``detect_gpus`` as a mode ("" when absent: the engine-wide setting)."""
    value = entry.get("detect_gpus")
    if value is None:
        return ""
    mode = ("always" if value else "never") if isinstance(value, bool) else value
    if mode not in DETECT_MODES:
        raise InvalidRequest(
            f"{where}.detect_gpus: {value!r}; use 'auto' (when its Docker has the nvidia "
            "runtime), True or 'always', False or 'never'",
            "agents",
        )
    return str(mode)


def _one(
    entry: Mapping[str, Any], i: int, data_root: str, defaults: Mapping[str, float]
) -> AgentConfig:
    agent_id = str(entry.get("id") or f"agent{i + 1}")
    where = f"ClusterManager.agents[{i}] ({agent_id})"
    url = str(entry.get("url") or "")
    tls = _tls(entry, where)
    insecure = entry.get("insecure", False)
    if not isinstance(insecure, bool):
        raise InvalidRequest(f"{where}.insecure: give True or False", "agents")
    if url and not url.startswith(("unix://", "tcp://", "ssh://")):
        raise InvalidRequest(
            f"{where}.url: {url!r} is not a Docker URL; use unix:///path/docker.sock, "
            "tcp://HOST:2376 (with tls) or ssh://USER@HOST",
            "agents",
        )
    if url.startswith(("tcp://", "ssh://")):
        try:
            port = urlsplit(url).port
        except ValueError:  # not a number, or out of range
            port = 0
        if port == 0:
            raise InvalidRequest(
                f"{where}.url: {url!r} has no valid port; give one from 1 to 65535, "
                "e.g. tcp://HOST:2376",
                "agents",
            )
    if url.startswith("tcp://") and tls is None and not insecure:
        raise InvalidRequest(
            f"{where}: {url} is a plain TCP Docker API: whoever reaches it is root on that "
            f"host. To use it, {TLS_HELP}",
            "agents",
        )
    address = str(entry.get("address") or "127.0.0.1")
    # SSH everywhere by default: a published kernel port, even on loopback, lets
    # every local user read the kernel's IOPub (a subscriber needs no key).
    transport = entry.get("kernel_transport") or "ssh"
    if transport not in KERNEL_TRANSPORTS:
        raise InvalidRequest(
            f"{where}.kernel_transport: {transport!r}; use 'ssh' (kernel traffic forwarded "
            "through main1's SSH port, encrypted) or 'direct' (its published ports)",
            "agents",
        )
    return AgentConfig(
        id=agent_id,
        url=url,
        resource_group=str(entry.get("resource_group") or "default"),
        address=address,
        cpu=parse_cpu(entry["cpu"], f"agents.{agent_id}.cpu") if "cpu" in entry else None,
        mem=parse_size(entry["mem"], f"agents.{agent_id}.mem") if "mem" in entry else None,
        gpus=tuple(str(g) for g in entry.get("gpus") or ()),
        gpu_probe=GpuProbe(mode=_detect_gpus(entry, where)),
        data_root=str(entry.get("data_root") or data_root),
        tls=tls,
        insecure=insecure,
        timeout=_seconds(entry, "timeout", defaults.get("timeout", 30.0), where),
        connect_timeout=_seconds(
            entry, "connect_timeout", defaults.get("connect_timeout", 5.0), where
        ),
        kernel_transport=str(transport),
    )


def agent_configs(
    raw: Sequence[Mapping[str, Any]], data_root: str, defaults: Mapping[str, float] | None = None
) -> list[AgentConfig]:
    """Validated agent configurations; the local engine when ``raw`` is empty.

    ``defaults`` holds the manager's ``timeout`` and ``connect_timeout``, which an
    agent's own keys override.
    """
    defaults = defaults or {}
    if not raw:
        return [_one({"id": "local"}, 0, data_root, defaults)]
    configs: list[AgentConfig] = []
    for i, entry in enumerate(raw):
        unknown = set(entry) - _KEYS
        if unknown:
            raise InvalidRequest(
                f"ClusterManager.agents[{i}]: unknown key(s) {', '.join(sorted(unknown))}; "
                f"known keys are {', '.join(sorted(_KEYS))}",
                "agents",
            )
        config = _one(entry, i, data_root, defaults)
        if any(c.id == config.id for c in configs):
            raise InvalidRequest(f"ClusterManager.agents: agent id {config.id!r} is used twice")
        configs.append(config)
    return configs


def make_agent(config: AgentConfig, lock_dir: str = "") -> Agent:
    """The real Docker agent for ``config`` (imported lazily: aiodocker is an edge);
    ``lock_dir`` as :class:`~.docker.agent.DockerAgent` takes it."""
    from .docker.agent import DockerAgent

    return DockerAgent(config, lock_dir)
