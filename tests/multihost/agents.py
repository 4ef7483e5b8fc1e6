"""Several Docker-in-Docker "agents" on this machine, for the multi-host tests.

The ``agents`` fixture of :mod:`tests.multihost.conftest` starts an
:class:`AgentCluster`; tests use its :class:`AgentHost` objects to talk to each
agent's engine and to get the ``ClusterManager.agents`` entries pointing at them.
Each agent is a container of ``jupyter-cluster/test-agent`` (``dind/``) running
``dockerd`` at a fixed IP on a bridge network of its own; agent1 serves the API over
TLS (2376), the others over plain TCP (2375). The agents form one Docker Swarm as the
README says (agent1 its manager, the others workers, see :mod:`.swarm`), get the given
images with ``jupyter cluster image push-to-agents`` (as the README says), and share a
data-folder root mounted at the same path in each.
:class:`AgentHost` lives in :mod:`.host`, the Swarm in :mod:`.swarm`, the docker
and openssl helpers in :mod:`.dockercli` and :mod:`.certs`.
"""

from __future__ import annotations

import atexit
import ipaddress
import json
import logging
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from tests.support.constants import IMAGE

from .certs import make_agent_certs
from .dockercli import (
    AGENT_IMAGE,
    LABEL,
    NAME_PREFIX,
    OWNER_LABEL,
    RUN_LABEL,
    STORAGE_ENV,
    DockerError,
    docker,
    docker_all,
    ensure_agent_image,
    finish,
    free_subnets,
    leftovers,
    missing_images,
    owner_tag,
)
from .host import AgentHost, AgentStartError
from .swarm import form_swarm, swarm_nodes

__all__ = ["AgentCluster", "AgentHost", "AgentStartError", "DockerError"]

log = logging.getLogger("tests.multihost")

#: Overlay networks of the Swarm get /24s of this pool (kept apart from the agents' subnet).
OVERLAY_POOL = "10.214.0.0/16"
#: Security options under which Docker-in-Docker works here (``--privileged`` fails).
RUN_OPTIONS = (
    "--cap-add", "ALL", "--cap-drop", "SYS_RESOURCE",
    "--security-opt", "seccomp=unconfined", "--security-opt", "apparmor=unconfined",
    "--security-opt", "systempaths=unconfined", "-v", "/sys/fs/cgroup:/sys/fs/cgroup:rw",
)  # fmt: skip


class AgentCluster:
    """N agents (agent1 with TLS) in one Swarm; ``start()``/``stop()`` or ``with``.

    ``stop()`` removes the containers, their volumes, the network and the temporary
    folder (certificates, data root), also after a failed or interrupted ``start()``.
    ``timings`` holds the seconds of ``build`` (if the image was built), ``engines``,
    ``swarm``, ``images``, ``start`` and ``stop``. ``storage``: each agent's
    /var/lib/docker on a named volume (default), or on a tmpfs (``"tmpfs"``, or
    $JC_TEST_AGENTS_STORAGE=tmpfs: loads ~30 % and removes ~10x faster, costs RAM).
    """

    def __init__(
        self,
        n: int = 3,
        *,
        images: Sequence[str] = (IMAGE,),
        tls_agents: Sequence[int] = (1,),
        overlay_pool: str = OVERLAY_POOL,
        ready_timeout: float = 90.0,
        storage: str | None = None,
    ) -> None:
        self.storage = storage or os.environ.get(STORAGE_ENV) or "volume"
        if self.storage not in ("volume", "tmpfs"):
            raise ValueError(f"storage: 'volume' or 'tmpfs', not {self.storage!r}")
        self.n = n
        self.images = list(dict.fromkeys(images))
        self.tls_agents = set(tls_agents)
        self.overlay_pool = overlay_pool
        self.ready_timeout = ready_timeout
        self.prefix = f"{NAME_PREFIX}{secrets.token_hex(4)}"
        self.agents: list[AgentHost] = []
        self.network: str | None = None
        self.subnet: str | None = None
        self.volumes: list[str] = []
        self.run_dir: Path | None = None
        self.data_root: str | None = None
        self.timings: dict[str, float] = {}
        self.labels = {LABEL: "1", OWNER_LABEL: owner_tag(), RUN_LABEL: self.prefix}

    def __enter__(self) -> AgentCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __iter__(self) -> Iterator[AgentHost]:
        return iter(self.agents)

    def __getitem__(self, agent_id: str) -> AgentHost:
        """The agent named ``agent_id`` (``"agent1"``, ...)."""
        return next(a for a in self.agents if a.id == agent_id)

    def configs(self, **overrides: Any) -> list[dict[str, Any]]:
        """``ClusterManager.agents``: the config entries of every agent."""
        return [a.config(**overrides) for a in self.agents]

    def _label_args(self) -> list[str]:
        return [arg for k, v in self.labels.items() for arg in ("--label", f"{k}={v}")]

    # -- start ------------------------------------------------------------------------

    def start(self) -> AgentCluster:
        """Build the image if needed, start the agents, form the Swarm, load the images."""
        missing = missing_images(self.images)
        if missing:
            raise DockerError(f"images missing on this machine: {', '.join(missing)}")
        built = ensure_agent_image()
        if built is not None:
            self.timings["build"] = built
        started = time.monotonic()
        atexit.register(self.stop)
        background: list[subprocess.Popen[str]] = []  # killed if starting fails
        try:
            self._make_folders()
            self._make_network()
            self._run_agents()
            self._wait_engines()
            self.timings["engines"] = time.monotonic() - started
            mark = time.monotonic()
            background += (loads := self._start_pushes())  # while the Swarm forms
            form_swarm(self.agents, self.overlay_pool)
            self.timings["swarm"] = time.monotonic() - mark
            self._finish_loads(loads)
            self.timings["images"] = time.monotonic() - mark
        except BaseException:
            for process in background:
                process.kill()
                process.wait()
            self.stop()
            raise
        self.timings["start"] = time.monotonic() - started
        log.info("agents %s started: %s", self.prefix, self.timings)
        return self

    def _make_folders(self) -> None:
        self.run_dir = Path(tempfile.mkdtemp(prefix=self.prefix + "-"))
        self.run_dir.chmod(0o755)
        (self.run_dir / "owner").write_text(self.labels[OWNER_LABEL])
        data = self.run_dir / "data"
        data.mkdir()
        data.chmod(0o777)  # inner containers run as uid 1000
        (self.run_dir / "config").mkdir(mode=0o700)
        self.data_root = str(data)

    def _make_network(self) -> None:
        name, errors, pool = self.prefix, [], ipaddress.ip_network(self.overlay_pool)
        for subnet in free_subnets():
            if pool.overlaps(ipaddress.ip_network(subnet)):
                errors.append(f"{subnet}: overlaps the overlay pool {pool}")
                continue
            result = docker("network", "create", "--driver", "bridge", "--subnet", subnet,
                            *self._label_args(), name, check=False)  # fmt: skip
            if result.returncode == 0:
                self.network, self.subnet = name, subnet
                return
            errors.append(f"{subnet}: {result.stderr.strip()}")  # taken meanwhile: next one
        raise DockerError("no free subnet for the agents' network:\n" + "\n".join(errors))

    def _run_agents(self) -> None:
        assert self.run_dir is not None and self.data_root is not None and self.subnet
        hosts = list(ipaddress.ip_network(self.subnet).hosts())
        for i in range(1, self.n + 1):
            agent_id, ip = f"agent{i}", str(hosts[9 + i])
            container, volume = f"{self.prefix}-{i}", f"{self.prefix}-{i}-docker"
            mounts = ["-v", f"{self.data_root}:{self.data_root}"]
            if self.storage == "tmpfs":
                mounts += ["--tmpfs", "/var/lib/docker:rw,exec,size=8g"]
            else:
                docker("volume", "create", *self._label_args(), volume)
                self.volumes.append(volume)
                mounts += ["--mount", f"type=volume,src={volume},dst=/var/lib/docker"]
            dockerd = ["-H", "unix:///var/run/docker.sock"]
            tls = None
            if i in self.tls_agents:
                server, tls = make_agent_certs(self.run_dir / f"certs-{agent_id}", agent_id, ip)
                mounts += ["-v", f"{server}:/certs:ro"]
                dockerd += ["-H", "tcp://0.0.0.0:2376", "--tlsverify", "--tlscacert",
                            "/certs/ca.pem", "--tlscert", "/certs/server-cert.pem",
                            "--tlskey", "/certs/server-key.pem"]  # fmt: skip
            else:
                # --tls=false: dockerd 20.10 sleeps 15 s on a plain TCP listener otherwise.
                dockerd += ["-H", "tcp://0.0.0.0:2375", "--tls=false"]
            port = 2376 if tls else 2375
            agent = AgentHost(agent_id, container, ip, f"tcp://{ip}:{port}", tls, self.data_root)
            self.agents.append(agent)
            docker("run", "-d", "--name", container, "--hostname", agent_id,
                   *self._label_args(), "--network", self.network or "", "--ip", ip,
                   *RUN_OPTIONS, *mounts, AGENT_IMAGE, *dockerd)  # fmt: skip

    def _wait_engines(self) -> None:
        deadline = time.monotonic() + self.ready_timeout
        for agent in self.agents:
            while True:
                try:
                    answer = agent.docker("version", "--format", "{{.Server.Version}}", timeout=5)
                    if answer.returncode == 0:
                        break
                except subprocess.TimeoutExpired:
                    pass
                state = docker("inspect", "--format", "{{.State.Status}}", agent.container)
                if state.stdout.strip() != "running" or time.monotonic() > deadline:
                    raise AgentStartError(
                        f"{agent.id} ({agent.container}, {agent.url}) did not answer within "
                        f"{self.ready_timeout:g} s (container {state.stdout.strip()}); "
                        f"its dockerd log ends:\n{agent.logs()}"
                    )
                time.sleep(0.3)

    def swarm_nodes(self) -> dict[str, str]:
        """Host name -> status (``Ready``, ``Down``...) of the Swarm's nodes, from agent1."""
        return swarm_nodes(self.agents[0])

    def _start_pushes(self) -> list[subprocess.Popen[str]]:
        """Copy the images to every agent as the README says, with ``jupyter cluster
        image push-to-agents IMAGE`` and a configuration naming the agents."""
        assert self.run_dir is not None
        config_dir = self.run_dir / "config"
        settings = {"agents": self.configs(), "db_path": str(self.run_dir / "push.db")}
        (config_dir / "jupyter_cluster_config.json").write_text(
            json.dumps({"ClusterManager": settings})
        )
        env = {**os.environ, "JUPYTER_CONFIG_DIR": str(config_dir), "JUPYTER_CONFIG_PATH": ""}
        jupyter = str(Path(sys.executable).with_name("jupyter"))
        return [
            subprocess.Popen(
                [jupyter, "cluster", "image", "push-to-agents", image],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            for image in self.images
        ]

    def _finish_loads(self, pushes: list[subprocess.Popen[str]]) -> None:
        """Wait for the pushes of :meth:`_start_pushes`; raise if one failed."""
        pairs = list(zip(self.images, finish(pushes), strict=True))
        failed = [f"{image}: {out}" for image, (code, out) in pairs if code]
        if failed:
            raise AgentStartError(
                "jupyter cluster image push-to-agents failed:\n" + "\n".join(failed)
            )
        for image, (_, out) in pairs:
            log.info("pushed %s to the agents: %s", image, out)

    # -- stop -------------------------------------------------------------------------

    def stop(self) -> None:
        """Remove everything this cluster made on this machine (idempotent, thorough)."""
        atexit.unregister(self.stop)
        if self.network is None and self.run_dir is None and not self.volumes:
            return
        started, errors = time.monotonic(), []
        containers = [a.container for a in self.agents]
        for container in containers:  # a paused container can't be killed cleanly
            docker("unpause", container, check=False)
        steps: list[list[list[str]]] = []
        if containers:
            steps.append([["rm", "-f", "-v", *containers]])
        steps.append([["volume", "rm", "-f", v] for v in self.volumes])  # at once: ~3 s each
        if self.network:
            steps.append([["network", "rm", self.network]])
        for step in steps:
            for args, (code, out) in zip(step, docker_all(step, 300), strict=True):
                if code != 0 and "No such" not in out:
                    errors.append(f"docker {' '.join(args)}: {out}")
        if self.run_dir is not None:
            shutil.rmtree(self.run_dir, ignore_errors=True)
            if self.run_dir.exists():
                errors.append(f"could not remove {self.run_dir}")
        errors += [f"left behind: {what}" for what in leftovers(self.prefix)]
        self.network, self.run_dir, self.volumes, self.agents = None, None, [], []
        self.timings["stop"] = time.monotonic() - started
        log.info("agents %s stopped in %.1f s", self.prefix, self.timings["stop"])
        if errors:
            raise DockerError("stopping the agents failed:\n" + "\n".join(errors))
