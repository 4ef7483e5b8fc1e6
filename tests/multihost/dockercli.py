"""This machine's ``docker`` command line, as the multi-host test fixture uses it.

Called by :mod:`tests.multihost.agents` (and by its conftest and tests): runs
``docker`` (:func:`tests.support.docker.docker`) with a clean environment, checks the
engine and the images, builds the agent image from ``dind/``, picks a free subnet, and
finds and removes what earlier, crashed runs left behind. Everything the fixture
creates carries :data:`LABEL` and an owner label naming the creating process, so
leftovers can be told from the objects of a run still going on in parallel.
"""

from __future__ import annotations

import fnmatch
import hashlib
import ipaddress
import logging
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from tests.support import docker as support_docker
from tests.support.docker import DockerError as DockerError  # docker() raises it

log = logging.getLogger("tests.multihost")

LABEL = "jupyter-cluster.test-agents"
OWNER_LABEL = "jupyter-cluster.test-agents.owner"
RUN_LABEL = "jupyter-cluster.test-agents.run"
NAME_PREFIX = "jc-test-agent-"
AGENT_IMAGE = "jupyter-cluster/test-agent:latest"
BASE_IMAGE = "jupyter-cluster/debian:bookworm"
DIND_DIR = Path(__file__).with_name("dind")
#: Label of the agent image: the digest of the ``dind/`` files it was built from.
SOURCE_LABEL = "jupyter-cluster.test-agent.source"
#: Agent subnet: this variable if set, else the first free one of DEFAULT_SUBNETS.
SUBNET_ENV = "JC_TEST_AGENTS_SUBNET"
DEFAULT_SUBNETS = tuple(f"10.213.{i}.0/24" for i in range(1, 64))
#: "tmpfs" puts the agents' /var/lib/docker on a tmpfs instead of a volume.
STORAGE_ENV = "JC_TEST_AGENTS_STORAGE"


def clean_env() -> dict[str, str]:
    """This process's environment without the variables that retarget ``docker``."""
    drop = {"DOCKER_HOST", "DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH", "DOCKER_CONTEXT", "DOCKER_TLS"}
    return {k: v for k, v in os.environ.items() if k not in drop}


def docker(
    *args: str, timeout: float = 120, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run ``docker ARGS`` on this machine's engine, whatever ``DOCKER_HOST`` says; with
    ``check``, raise :class:`DockerError` if it fails."""
    return support_docker.docker(*args, check=check, timeout=timeout, env=clean_env())


def spawn(*args: str) -> subprocess.Popen[str]:
    """Start ``docker ARGS`` in the background (stdout and stderr together); see :func:`finish`."""
    return subprocess.Popen(
        ["docker", *args],
        env=clean_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def finish(
    processes: Sequence[subprocess.Popen[str]], timeout: float = 600
) -> list[tuple[int, str]]:
    """Wait for processes of :func:`spawn`; (return code, output) of each, in order.

    Kills those still running if waiting fails (timeout, Ctrl-C)."""
    results = []
    try:
        for process in processes:
            out, _ = process.communicate(timeout=timeout)
            results.append((process.returncode, out.strip()))
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
    return results


def docker_all(commands: Iterable[Sequence[str]], timeout: float = 600) -> list[tuple[int, str]]:
    """Run several ``docker`` commands at once; (return code, output) of each, in order."""
    return finish([spawn(*args) for args in commands], timeout)


def engine_problem() -> str | None:
    """Why this machine's Docker engine can't be used (None if ``docker info`` answers)."""
    try:
        info = docker("info", "--format", "{{.ServerVersion}}", timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"the docker command failed: {exc}"
    if info.returncode != 0:
        return f"the Docker engine does not answer `docker info`:\n{info.stderr.strip()}"
    return None


def missing_images(images: Iterable[str]) -> list[str]:
    """The images of ``images`` this machine's engine does not have."""
    return [i for i in images if docker("image", "inspect", i, check=False).returncode != 0]


def dind_source_hash() -> str:
    """A digest of ``dind/`` (every file's name and bytes): the agent image carries it
    in :data:`SOURCE_LABEL`, so an image built from older files is built again."""
    digest = hashlib.sha256()
    for path in sorted(p for p in DIND_DIR.rglob("*") if p.is_file()):
        digest.update(path.relative_to(DIND_DIR).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def ensure_agent_image(rebuild: bool = False) -> float | None:
    """Build :data:`AGENT_IMAGE` from ``dind/`` unless present and built from the same
    files; the seconds it took (None if it was up to date)."""
    source = dind_source_hash()
    if not rebuild:
        label = "{{index .Config.Labels " + f'"{SOURCE_LABEL}"' + "}}"
        found = docker("image", "inspect", "--format", label, AGENT_IMAGE, check=False)
        if found.returncode == 0 and found.stdout.strip() == source:
            return None
    if missing_images([BASE_IMAGE]):
        raise DockerError(f"{BASE_IMAGE} is missing: the agent image is built FROM it")
    started = time.monotonic()
    log.info("building %s from %s", AGENT_IMAGE, DIND_DIR)
    docker("build", "-q", "--force-rm", "--label", f"{SOURCE_LABEL}={source}", "-t", AGENT_IMAGE,
           str(DIND_DIR), timeout=900)  # fmt: skip
    seconds = time.monotonic() - started
    log.info("built %s in %.1f s", AGENT_IMAGE, seconds)
    return seconds


# -- subnets ------------------------------------------------------------------------


def _host_routes() -> list[ipaddress.IPv4Network]:
    """The IPv4 networks this machine routes to (from /proc/net/route, no traffic)."""
    routes: list[ipaddress.IPv4Network] = []
    try:
        lines = Path("/proc/net/route").read_text().splitlines()[1:]
    except OSError:
        return routes
    for line in lines:
        fields = line.split()
        dest, mask = (socket.inet_ntoa(struct.pack("<L", int(f, 16))) for f in fields[1:8:6])
        if mask != "0.0.0.0":
            routes.append(ipaddress.IPv4Network(f"{dest}/{mask}", strict=False))
    return routes


def taken_subnets() -> list[ipaddress.IPv4Network]:
    """Subnets of this engine's networks and of this machine's routes."""
    taken = _host_routes()
    ids = docker("network", "ls", "-q").stdout.split()
    if ids:
        fmt = "{{range .IPAM.Config}}{{.Subnet}} {{end}}"
        out = docker("network", "inspect", "--format", fmt, *ids, check=False).stdout
        for subnet in out.split():
            net = ipaddress.ip_network(subnet, strict=False)
            if isinstance(net, ipaddress.IPv4Network):
                taken.append(net)
    return taken


def free_subnets() -> list[str]:
    """Subnets to try for the agents' network, best first ($JC_TEST_AGENTS_SUBNET alone)."""
    if os.environ.get(SUBNET_ENV):
        return [os.environ[SUBNET_ENV]]
    taken = taken_subnets()
    return [
        s for s in DEFAULT_SUBNETS if not any(ipaddress.ip_network(s).overlaps(t) for t in taken)
    ]


# -- owners and leftovers -------------------------------------------------------------


def _start_time(pid: int) -> str | None:
    """The start time of process ``pid`` (field 22 of /proc/PID/stat), None if gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


def owner_tag() -> str:
    """``PID:STARTTIME`` of this process: the owner label of what it creates."""
    return f"{os.getpid()}:{_start_time(os.getpid())}"


def owner_alive(tag: str) -> bool:
    """Whether the process named by an owner tag (see :func:`owner_tag`) still runs."""
    pid, _, start = tag.partition(":")
    return pid.isdigit() and _start_time(int(pid)) == start


def _labelled(kind: str, pattern: str) -> list[tuple[str, str]]:
    """(name, owner tag) of the ``kind`` objects labelled :data:`LABEL` matching ``pattern``."""
    name = "{{.Names}}" if kind == "container" else "{{.Name}}"
    listing = ["ps", "-a"] if kind == "container" else [kind, "ls"]
    fmt = f'{name}\t{{{{.Label "{OWNER_LABEL}"}}}}'
    out = docker(*listing, "--filter", f"label={LABEL}", "--format", fmt).stdout
    rows = [tuple(line.split("\t", 1)) for line in out.splitlines() if line.strip()]
    return [(n, o) for n, o in rows if fnmatch.fnmatchcase(n, pattern)]


def remove_stale(prefix_pattern: str = NAME_PREFIX + "*", *, everything: bool = False) -> list[str]:
    """Remove the leftovers of earlier runs of the agents fixture; what was removed.

    Containers, volumes and networks labelled :data:`LABEL` whose name matches the
    glob ``prefix_pattern``, and temporary folders of that name, are removed when the
    process that created them is gone (or with ``everything``, regardless). Called by
    the ``agents`` fixture before it starts, and usable by hand after a crash.
    """
    removed: list[str] = []
    stale = {
        kind: [
            n for n, tag in _labelled(kind, prefix_pattern) if everything or not owner_alive(tag)
        ]
        for kind in ("container", "volume", "network")
    }
    if stale["container"]:
        for name in stale["container"]:
            docker("unpause", name, check=False)
        docker("rm", "-f", "-v", *stale["container"], timeout=300, check=False)
    if stale["volume"]:
        docker("volume", "rm", "-f", *stale["volume"], check=False)
    for name in stale["network"]:
        docker("network", "rm", name, check=False)
    for kind, names in stale.items():
        removed += [f"{kind} {n}" for n in names]
    for folder in Path(tempfile.gettempdir()).glob(prefix_pattern):
        owner = folder / "owner"
        if owner.is_file() and (everything or not owner_alive(owner.read_text().strip())):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(f"folder {folder}")
    if removed:
        log.warning("removed leftovers of earlier runs: %s", ", ".join(removed))
    return removed


def leftovers(run: str) -> list[str]:
    """Containers, volumes and networks of the run ``run`` (its RUN_LABEL) still there."""
    found = []
    for listing in (["ps", "-a"], ["volume", "ls"], ["network", "ls"]):
        fmt = "{{.Names}}" if listing[0] == "ps" else "{{.Name}}"
        out = docker(*listing, "--filter", f"label={RUN_LABEL}={run}", "--format", fmt).stdout
        found += [f"{listing[0]} {n}" for n in out.split()]
    return found
