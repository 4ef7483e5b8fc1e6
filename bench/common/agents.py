"""Two Docker-in-Docker agents and the floor on them, for ``bench_multiagent.py``.

The agents are those of the multi-host tests (``tests.multihost.agents.AgentCluster``:
each a ``dockerd`` in a container of this machine, both serving their API over TLS
with a client certificate, in one Swarm): :func:`agent_cluster` starts two,
:func:`agent_leftovers` finds what a run left on them. :class:`AgentFloor` puts bare
containers on them with aiodocker only (no engine code); ours go through a cluster
kernelspec or ``ClusterManager`` configured with the same agents
(:func:`engine_config`), and must span both (:func:`session_on_two_agents`).

The multi-host tests' helpers live in the repository's ``tests`` package, which is
not installed: :func:`agent_cluster` (the only place in ``bench/`` that does so)
puts the repository's root on ``sys.path`` to import them. The multi-host smoke
test passes its own started agents instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common.bare import KERNEL, SSH, SSHD, Made, bare_config, exec_ok, floor_connection
from common.constants import BENCH_LABEL, KERNEL_PORTS, SSH_PORT
from common.harness import log
from common.kernels import client_of, placement_of

#: The repository's root (holding ``tests/``).
ROOT = Path(__file__).resolve().parents[2]


def agent_client(url: str, tls: dict[str, str] | None) -> Any:
    """An aiodocker client of an agent's engine (``tcp://`` URL; TLS with its client
    certificate when ``tls``), as any Docker client of that agent would be. aiodocker
    makes (and so closes) the connection pool itself."""
    import aiodocker

    address = url.removeprefix("tcp://")
    if tls is None:
        return aiodocker.Docker(url=f"http://{address}")
    context = ssl.create_default_context(cafile=tls["ca"])
    context.load_cert_chain(tls["cert"], tls["key"])
    return aiodocker.Docker(url=f"https://{address}", ssl_context=context)


def ready_script(hosts: list[str], timeout: float) -> str:
    """Bash run in main1: wait until every host's sshd sends its banner (``SSH-...`` read
    from ``HOST:2200``, retried every 20 ms), then ``ssh <last host> true`` must work
    (retried the same way); exits 1 after about ``timeout`` seconds. Cheap on purpose:
    it shares main1's CPU with the starting kernel."""
    tries = max(1, int(timeout / 0.02))
    give_up = f'n=$((n+1)); [ $n -ge {tries} ] && echo "$h never answered" >&2 && exit 1; '
    return (
        f"for h in {' '.join(hosts)}; do n=0; "
        f"until read -t 1 -r line 2>/dev/null </dev/tcp/$h/{SSH_PORT} && "
        f"[[ $line == SSH-* ]]; do {give_up}sleep 0.02; done; done; "
        f"h={hosts[-1]}; n=0; until {' '.join(SSH)} $h true; do {give_up}sleep 0.02; done"
    )


@dataclass
class AgentFloor(Made):
    """Bare containers on the agents, on a Swarm overlay of their own."""

    clients: dict[str, Any]  # agent id -> aiodocker client
    addresses: dict[str, str]  # agent id -> the address its ports are published on
    image: str
    cpu: float
    mem: int
    run_id: str
    files: tuple[dict[str, bytes], dict[str, bytes]]  # a sub's, main1's (floor_keys)

    async def _start(
        self, agent: str, network: str, host: str, script: str, files: dict[str, bytes]
    ) -> Any:
        """Create a container on ``agent`` (main1 publishing the kernel's ports on the
        agent's address), put ``files`` in, start it; the inspected container."""
        ports = KERNEL_PORTS if host == "main1" else ()
        config = bare_config(
            self.image, self.run_id, host, script, network, self.cpu, self.mem, ports, ""
        )
        return await self.start_container(self.clients[agent], config, files)

    async def launch(self, placement: dict[str, str], timeout: float) -> float:
        """Seconds from the first API call until main1's kernel answers ``kernel_info``
        and ``ssh HOST true`` run in main1 worked for every host, the last sub last.

        ``placement``: host -> agent id (main1's agent creates the overlay network,
        as the engine's does)."""
        inner, connection = floor_connection()
        main_files = {**self.files[1], "/tmp/bench/kernel.json": json.dumps(connection).encode()}
        hosts = list(placement)
        home = placement["main1"]
        client = None
        start = time.monotonic()
        try:
            name = f"jcbench-{self.run_id}-{uuid.uuid4().hex[:8]}"
            body = {
                "Name": name,
                "Driver": "overlay",
                "Attachable": True,
                "CheckDuplicate": True,
                "Labels": {BENCH_LABEL: self.run_id},
            }
            self.networks.append(await self.clients[home].networks.create(body))
            started = await asyncio.gather(
                *(
                    self._start(
                        placement[h],
                        name,
                        h,
                        f"{SSHD} & exec {KERNEL}" if h == "main1" else SSHD,
                        main_files if h == "main1" else self.files[0],
                    )
                    for h in hosts
                )
            )
            ports = started[0]._container["NetworkSettings"]["Ports"]
            outer = {n: int(ports[f"{p}/tcp"][0]["HostPort"]) for n, p in inner.items()}
            client = client_of({**connection, **outer, "ip": self.addresses[home]})
            ssh = exec_ok(started[0], ["/bin/bash", "-c", ready_script(hosts, timeout)])
            await asyncio.gather(client.wait_for_ready(timeout=timeout), ssh)
            return time.monotonic() - start
        finally:
            if client is not None:
                client.stop_channels()

    async def remove_run(self) -> None:
        """Remove every floor container and network of this run on every agent."""
        label = {"label": [f"{BENCH_LABEL}={self.run_id}"]}
        for docker in self.clients.values():
            found = await docker.containers.list(all=True, filters=label)
            await asyncio.gather(
                *(c.delete(force=True, v=True) for c in found), return_exceptions=True
            )
        for docker in self.clients.values():
            for net in await docker.networks.list(filters=label):
                with contextlib.suppress(Exception):  # an overlay gone through the other agent
                    await docker.networks.delete(net["Id"])


def engine_config(agents: list[dict[str, Any]], data_root: str) -> Any:
    """The ClusterManager's config: the two agents, their shared data root."""
    from traitlets.config import Config

    return Config({"ClusterManager": {"agents": agents, "data_root": data_root}})


def check_two_agents(placement: dict[str, str]) -> None:
    """Fail unless ``placement`` (host -> agent id) uses two agents."""
    if len(set(placement.values())) != 2:
        raise RuntimeError(f"the session did not span two agents: {placement}")


async def session_on_two_agents(manager: Any, session_id: str) -> dict[str, str]:
    """host -> agent id of a session's containers; fails unless it spans two agents."""
    placed = await placement_of(manager, session_id)
    check_two_agents(placed)
    return placed


def agent_cluster(image: str, storage: str | None) -> Any:
    """Two started agents (both TLS) in one Swarm, ``image`` loaded in each."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.multihost.agents import AgentCluster
    from tests.multihost.dockercli import remove_stale

    remove_stale()  # what crashed runs of the agents left (their owners are gone)
    cluster = AgentCluster(2, images=[image], tls_agents=(1, 2), storage=storage)
    cluster.start()
    log(f"agents started: {', '.join(f'{k} {v:.1f} s' for k, v in cluster.timings.items())}")
    return cluster


def agent_leftovers(cluster: Any, labels: list[str], settle: float = 10.0) -> list[str]:
    """Containers and networks carrying any of ``labels`` still on an agent, after
    up to ``settle`` seconds (a node may list a removed Swarm overlay for a moment)."""
    deadline = time.monotonic() + settle
    while True:
        found = []
        for agent in cluster:
            for label in labels:
                for kind in (("ps", "-a"), ("network", "ls")):
                    listing = agent.docker(
                        *kind,
                        "--filter",
                        f"label={label}",
                        "--format",
                        "{{.ID}} {{.Names}}" if kind[0] == "ps" else "{{.ID}} {{.Name}}",
                    ).stdout.splitlines()
                    found += [f"{agent.id}: {kind[0]} {line}" for line in listing]
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.5)
