"""Docker as the ``docker`` command line sees it: the independent witness of the tests.

What the code under test did is checked here without the code's own Docker client:
containers and networks are found by the labels the engine puts on them, and
whatever a test leaves labelled with its manager id is removed (and fails the test).
:func:`docker` runs the ``docker`` command line for every tier (for the multi-host
fixture too, through :mod:`tests.multihost.dockercli`, in an environment of its own).
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from jupyter_cluster.core.egress import BRIDGE_PREFIX, HOST_CHAIN
from jupyter_cluster.engine.agents.docker.beside import STARTED_LABEL

from .constants import IMAGE, LABEL_MANAGER, LABEL_SESSION


class DockerError(RuntimeError):
    """A ``docker`` command failed (the message holds the command, its exit code and output)."""


def docker(
    *args: str, check: bool = True, timeout: float = 120, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``docker ARGS`` to the end, its stdin closed, in ``env`` (by default this
    process's environment); with ``check``, raise :class:`DockerError` if it failed."""
    result = subprocess.run(
        ["docker", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    if check and result.returncode != 0:
        raise DockerError(
            f"docker {' '.join(args)} failed ({result.returncode}):\n{result.stderr}{result.stdout}"
        )
    return result


def require_docker_engine() -> None:
    """Fail (never skip) unless the Docker engine answers and :data:`IMAGE` exists."""
    try:
        info = docker("info", "--format", "{{.ServerVersion}}", check=False, timeout=60)
        image = docker("image", "inspect", IMAGE, check=False, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.fail(f"the docker command failed: {exc}; these tests need a Docker engine")
    if info.returncode != 0:
        problem = f"docker info: exit code {info.returncode}\n{info.stderr}"
        pytest.fail(f"the Docker engine is unreachable; start dockerd (make setup)\n{problem}")
    if image.returncode != 0:
        pytest.fail(f"the image {IMAGE} is missing; build it with `jupyter cluster image build`")


# -- objects by label -----------------------------------------------------------------


def labelled(label: str) -> tuple[list[str], list[str]]:
    """Ids of the containers and of the networks carrying ``label`` (``key=value``)."""
    containers = docker("ps", "-a", "-q", "--no-trunc", "--filter", f"label={label}").stdout
    networks = docker("network", "ls", "-q", "--no-trunc", "--filter", f"label={label}").stdout
    return containers.split(), networks.split()


def session_objects(session_id: str) -> tuple[list[str], list[str]]:
    """Containers and networks Docker has for one session (by its label)."""
    return labelled(f"{LABEL_SESSION}={session_id}")


def session_volumes(session_id: str) -> list[str]:
    """Names of the volumes Docker has for one session (by its label): its start-up
    files' volume while it runs, none once it is removed."""
    label = f"label={LABEL_SESSION}={session_id}"
    return docker("volume", "ls", "-q", "--filter", label).stdout.split()


def manager_objects(manager_id: str) -> tuple[list[str], list[str]]:
    """Containers and networks Docker has for one manager (by its label)."""
    return labelled(f"{LABEL_MANAGER}={manager_id}")


def inspect(*ids: str) -> list[dict[str, Any]]:
    """``docker inspect`` of containers or networks."""
    return json.loads(docker("inspect", *ids).stdout)


def container_exists(container_id: str) -> bool:
    """Whether Docker still knows the container."""
    return docker("inspect", container_id, check=False).returncode == 0


def helper_left(labels: dict[str, str], stamped: float, *, ran: bool) -> str:
    """A helper as an engine killed mid-way leaves it, carrying ``labels`` and the
    stamp of ``stamped`` (seconds since the epoch): exited if it ``ran`` (killed
    while it ran), else created and never started (killed before its start); its id."""
    flags = [f"--label={k}={v}" for k, v in {**labels, STARTED_LABEL: f"{stamped:.0f}"}.items()]
    how = ("run", "-d") if ran else ("create",)
    return docker(*how, *flags, "--entrypoint", "true", IMAGE).stdout.strip()


def running_hosts(session_id: str) -> dict[str, bool]:
    """Host name → running, of the session's containers as Docker reports them."""
    containers, _ = session_objects(session_id)
    if not containers:
        return {}
    return {c["Config"]["Hostname"]: bool(c["State"]["Running"]) for c in inspect(*containers)}


# -- leftovers ----------------------------------------------------------------------------


def remove_leftovers(manager_id: str) -> tuple[list[str], list[str]]:
    """Remove every container and network labelled with ``manager_id``; returns what there was."""
    containers, networks = manager_objects(manager_id)
    for cid in containers:
        docker("rm", "-f", "-v", cid, check=False)
    for nid in networks:
        docker("network", "rm", nid, check=False)
    return containers, networks


def remove_leftover_volumes(manager_id: str) -> list[str]:
    """Remove the volumes labelled with ``manager_id`` (a session's start-up files;
    after its containers); returns their names."""
    label = f"label={LABEL_MANAGER}={manager_id}"
    volumes = docker("volume", "ls", "-q", "--filter", label).stdout.split()
    for name in volumes:
        docker("volume", "rm", "-f", name, check=False)
    return volumes


def assert_nothing_left(manager_id: str, containers: list[str], networks: list[str]) -> None:
    """Fail if a test left containers or networks of its manager (already removed by
    :func:`remove_leftovers`) or volumes (removed here, after those containers)."""
    volumes = remove_leftover_volumes(manager_id)
    assert not containers and not networks and not volumes, (
        f"the test left {len(containers)} container(s), {len(networks)} network(s) and "
        f"{len(volumes)} volume(s) labelled {LABEL_MANAGER}={manager_id} (removed now): "
        f"containers {containers}, networks {networks}, volumes {volumes}"
    )


def remove_egress_chain() -> None:
    """Remove the agent host's egress chain (``restrict_egress``) from this machine: it
    is meant to stay on an agent, but a test machine is left as it was found."""
    for tool in ("iptables", "ip6tables"):
        jump = ["INPUT", "-i", f"{BRIDGE_PREFIX}+", "-j", HOST_CHAIN]
        while subprocess.run([tool, "-w", "-D", *jump], capture_output=True).returncode == 0:
            pass
        subprocess.run([tool, "-w", "-F", HOST_CHAIN], capture_output=True)
        subprocess.run([tool, "-w", "-X", HOST_CHAIN], capture_output=True)
