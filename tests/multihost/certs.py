"""TLS files for a Docker-in-Docker test agent, made with ``openssl``.

Called by :class:`tests.multihost.agents.AgentCluster` for the agents that serve
Docker's API over TLS: a throw-away CA, a server certificate valid for the agent's
IP (and 127.0.0.1), and a client certificate (``extendedKeyUsage=clientAuth``), the
one the tests and the engine present.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

DAYS = "2"


def _openssl(*args: str | Path, cwd: Path) -> None:
    """Run ``openssl ARGS`` in ``cwd``; raise with its stderr if it fails."""
    result = subprocess.run(
        ["openssl", *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=60
    )
    if result.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(map(str, args))} failed:\n{result.stderr}")


def _signed(directory: Path, name: str, subject: str, extensions: str) -> None:
    """Make ``NAME-key.pem`` and ``NAME-cert.pem`` in ``directory``, signed by its CA."""
    (directory / f"{name}.ext").write_text(extensions)
    _openssl("genrsa", "-out", f"{name}-key.pem", "2048", cwd=directory)
    _openssl(
        "req",
        "-new",
        "-key",
        f"{name}-key.pem",
        "-subj",
        subject,
        "-out",
        f"{name}.csr",
        cwd=directory,
    )
    _openssl(
        "x509",
        "-req",
        "-in",
        f"{name}.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca-key.pem",
        "-CAcreateserial",
        "-days",
        DAYS,
        "-sha256",
        "-extfile",
        f"{name}.ext",
        "-out",
        f"{name}-cert.pem",
        cwd=directory,
    )
    (directory / f"{name}-key.pem").chmod(0o600)


def make_agent_certs(directory: Path, agent_id: str, ip: str) -> tuple[Path, dict[str, str]]:
    """CA, server and client certificates for one agent, under ``directory`` (made 0700).

    Returns the folder to mount into the agent (``ca.pem``, ``server-cert.pem``,
    ``server-key.pem``) and the client's files as ``{"ca", "cert", "key"}`` paths.
    """
    directory.mkdir(mode=0o700, parents=True, exist_ok=False)
    directory.chmod(0o700)
    _openssl("genrsa", "-out", "ca-key.pem", "2048", cwd=directory)
    (directory / "ca-key.pem").chmod(0o600)
    _openssl(
        "req",
        "-x509",
        "-new",
        "-key",
        "ca-key.pem",
        "-days",
        DAYS,
        "-sha256",
        "-subj",
        f"/CN=jupyter-cluster test CA {agent_id}",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
        "-out",
        "ca.pem",
        cwd=directory,
    )
    _signed(
        directory,
        "server",
        f"/CN={agent_id}",
        f"subjectAltName=IP:{ip},IP:127.0.0.1,DNS:{agent_id},DNS:localhost\n"
        "keyUsage=critical,digitalSignature,keyEncipherment\n"
        "extendedKeyUsage=serverAuth\n",
    )
    _signed(
        directory,
        "client",
        "/CN=jupyter-cluster tests",
        "keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n",
    )
    server = directory / "server"
    server.mkdir(mode=0o700)
    for source, target in (
        ("ca.pem", "ca.pem"),
        ("server-cert.pem", "server-cert.pem"),
        ("server-key.pem", "server-key.pem"),
    ):
        (server / target).write_bytes((directory / source).read_bytes())
        (server / target).chmod(0o600)
    client = {
        "ca": str(directory / "ca.pem"),
        "cert": str(directory / "client-cert.pem"),
        "key": str(directory / "client-key.pem"),
    }
    return server, client
