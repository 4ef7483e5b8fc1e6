"""A private registry beside the test agents: TLS, basic auth, one image in it.

:class:`PrivateRegistry` runs ``jupyter-cluster/test-registry`` (``registry/``:
Debian's docker-registry) at a fixed address on the agents' network, with a
certificate for that address from a CA of its own and an htpasswd user with a
random password. Every agent's engine trusts the CA the way Docker documents it
(``/etc/docker/certs.d/HOST:PORT/ca.crt``). The test image is pushed from this
machine through the registry's port published on loopback (which Docker treats as
an insecure registry), with a throwaway docker client config, so no credential is
left on this machine. ``stop()`` removes the registry, the tags and the CA files.
"""

from __future__ import annotations

import ipaddress
import secrets
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from .agents import AgentCluster
from .certs import make_agent_certs
from .dockercli import DockerError, clean_env, docker, missing_images

REGISTRY_IMAGE = "jupyter-cluster/test-registry:latest"
REGISTRY_DIR = Path(__file__).parent / "registry"
USER = "tester"
#: The registry's port inside the agents' network.
PORT = 5000


class PrivateRegistry:
    """The registry of one test module (see the module docstring)."""

    def __init__(self, agents: AgentCluster, source_image: str) -> None:
        assert agents.subnet and agents.network and agents.run_dir
        self.agents = agents
        self.ip = str(list(ipaddress.ip_network(agents.subnet).hosts())[19])
        self.host = f"{self.ip}:{PORT}"
        self.image = f"{self.host}/jc/kernel:pulltest"
        self.source_image = source_image
        self.password = secrets.token_hex(12)
        self.container = f"{agents.prefix}-registry"
        self.dir = Path(tempfile.mkdtemp(prefix=agents.prefix + "-registry-"))
        self.loopback_port = 0

    def start(self) -> PrivateRegistry:
        """Build the image if needed, start the registry, trust it, push the image."""
        if missing_images([REGISTRY_IMAGE]):
            docker(
                "build", "-q", "--force-rm", "-t", REGISTRY_IMAGE, str(REGISTRY_DIR), timeout=900
            )
        certs, _ = make_agent_certs(self.dir / "certs", "registry", self.ip)
        htpasswd = subprocess.run(
            ["docker", "run", "--rm", "-i", REGISTRY_IMAGE, "htpasswd", "-niB", USER],
            input=self.password,
            capture_output=True,
            text=True,
            env=clean_env(),
            check=True,
        ).stdout.strip()
        (certs / "htpasswd").write_text(htpasswd + "\n")
        for path in certs.iterdir():
            path.chmod(0o644)  # the registry runs as root, but keep it readable
        certs.chmod(0o755)
        labels = [arg for k, v in self.agents.labels.items() for arg in ("--label", f"{k}={v}")]
        docker("run", "-d", "--name", self.container, *labels,
               "--network", str(self.agents.network), "--ip", self.ip,
               "-p", f"127.0.0.1::{PORT}", "-v", f"{certs}:/certs:ro", REGISTRY_IMAGE)  # fmt: skip
        port = docker("port", self.container, f"{PORT}/tcp").stdout.split(":")[-1]
        self.loopback_port = int(port.strip())
        for agent in self.agents:
            where = f"/etc/docker/certs.d/{self.host}"
            agent.inside("mkdir", "-p", where)
            docker("cp", str(certs / "ca.pem"), f"{agent.container}:{where}/ca.crt")
        self._push()
        return self

    def _push(self) -> None:
        """Push the source image to the registry as :attr:`image` (through loopback)."""
        here = f"127.0.0.1:{self.loopback_port}/jc/kernel:pulltest"
        client = self.dir / "client"
        client.mkdir(mode=0o700)
        env = {**clean_env(), "DOCKER_CONFIG": str(client)}
        deadline = time.monotonic() + 30
        while True:
            login = subprocess.run(
                ["docker", "login", "-u", USER, "--password-stdin", here.split("/")[0]],
                input=self.password, capture_output=True, text=True, env=env,
            )  # fmt: skip
            if login.returncode == 0:
                break
            if time.monotonic() > deadline:
                raise DockerError(f"cannot log in to the test registry: {login.stderr}")
            time.sleep(0.5)  # the registry is still starting
        docker("tag", self.source_image, here)
        try:
            push = subprocess.run(
                ["docker", "push", here], capture_output=True, text=True, env=env, timeout=600
            )
            if push.returncode != 0:
                raise DockerError(f"docker push {here} failed: {push.stderr or push.stdout}")
        finally:
            docker("rmi", here, check=False)

    def stop(self) -> None:
        """Remove the registry, what agents pulled from it, its CA on each, the files."""
        docker("rm", "-f", "-v", self.container, check=False)
        for agent in self.agents:
            for tag in agent.docker(
                "images", "--format", "{{.Repository}}:{{.Tag}}"
            ).stdout.split():
                if tag.startswith(self.host + "/"):
                    agent.docker("rmi", tag)
            agent.inside("rm", "-rf", f"/etc/docker/certs.d/{self.host}")
        shutil.rmtree(self.dir, ignore_errors=True)
