"""SSH key material for cluster sessions (asyncssh, through :mod:`jupyter_cluster.sshlib`).

The manager calls :func:`generate_session_keys` once per session: one user key
pair shared by the session's containers and one host key per container, so
``known_hosts`` can be written before any container starts and host-key checking
stays strict. The material is kept in the store until the session ends. The
configuration files that use it are rendered by :mod:`jupyter_cluster.core.ssh_config`.
"""

from __future__ import annotations

from collections.abc import Iterable

KEY_TYPE = "ssh-ed25519"


def _pair(comment: str) -> tuple[str, str]:
    # here, not at import: every CLI command imports the launcher; from sshlib, which
    # keeps cryptography's DSA warnings out of the CLI's output
    from ...sshlib import asyncssh

    key = asyncssh.generate_private_key(KEY_TYPE, comment=comment)
    private = key.export_private_key("openssh").decode()
    public = key.export_public_key("openssh").decode().strip()
    return private, public


def generate_session_keys(session_id: str, hosts: Iterable[str]) -> dict[str, str]:
    """Fresh key material: ``user`` / ``user.pub`` and ``host:<h>`` / ``host:<h>.pub``."""
    material: dict[str, str] = {}
    material["user"], material["user.pub"] = _pair(f"work@jupyter-cluster-{session_id[:8]}")
    for host in hosts:
        material[f"host:{host}"], material[f"host:{host}.pub"] = _pair(f"root@{host}")
    return material
