"""Build the default kernel image (``jupyter-cluster/kernel:latest``) with aiodocker.

The CLI (``jupyter-cluster image build``) and ``scripts/setup.sh`` call
:func:`build_kernel_image`. It builds ``kernel/Dockerfile`` on a Debian base: the
given one, else ``debian:bookworm-slim`` when the engine has it or can pull it,
else a local ``jupyter-cluster/debian:bookworm`` made here with debootstrap (for
machines with no container registry; see :func:`make_debian_base`). Docker errors
become :class:`~jupyter_cluster.errors.ClusterError` with a message to act on.
"""

from __future__ import annotations

import asyncio
import collections
import io
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import aiodocker
from aiodocker.exceptions import DockerError
from aiodocker.jsonstream import json_stream_list

from ..asyncwait import within
from ..core.naming import DEFAULT_IMAGE
from ..errors import ClusterError

KERNEL_DIR = Path(__file__).parent / "kernel"
REGISTRY_BASE = "debian:bookworm-slim"
LOCAL_BASE = "jupyter-cluster/debian:bookworm"
PULL_TIMEOUT = 120.0
_QUIET_DEBOOTSTRAP = re.compile(r"^I: (Retrieving|Validating|Extracting|Unpacking|Configuring) ")

Log = Callable[[str], None]


@asynccontextmanager
async def _connect(docker_url: str | None) -> AsyncIterator[aiodocker.Docker]:
    try:
        docker = aiodocker.Docker(url=docker_url)
    except (AssertionError, ValueError) as e:
        raise ClusterError(
            f"no Docker engine found ({docker_url or 'DOCKER_HOST / local socket'}): "
            "start one (scripts/setup.sh does) or pass its URL"
        ) from e
    try:
        yield docker
    except DockerError as e:
        raise ClusterError(f"Docker ({docker_url or 'local'}) failed: {e.message}") from e
    finally:
        await docker.close()


async def _exists(docker: aiodocker.Docker, tag: str) -> bool:
    try:
        await docker.images.inspect(tag)
    except DockerError as e:
        if e.status == 404:
            return False
        raise
    return True


async def _run(cmd: list[str], log: Log, quiet: re.Pattern[str] | None = None) -> None:
    """Run ``cmd``, passing its output lines to ``log``; raise ClusterError if it fails."""
    proc = await asyncio.create_subprocess_exec(
        *cmd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    assert proc.stdout is not None
    tail: collections.deque[str] = collections.deque(maxlen=10)
    async for raw in proc.stdout:
        line = raw.decode(errors="replace").rstrip()
        tail.append(line)
        if line and not (quiet and quiet.match(line)):
            log(line)
    if await proc.wait() != 0:
        raise ClusterError(f"{cmd[0]} failed (exit {proc.returncode}): " + " | ".join(tail))


async def _import_tree(docker: aiodocker.Docker, root: Path, tag: str) -> None:
    """``tar -C root -c . | docker import - tag``, streamed through the engine's API.

    (aiodocker's ``images.import_image`` is ``docker load``, not ``docker import``.)
    """
    name, sep, version = tag.rpartition(":")
    name, version = (name, version) if sep and "/" not in version else (tag, "latest")
    tar = await asyncio.create_subprocess_exec(
        "tar", "--numeric-owner", "-C", str(root), "-c", ".", stdout=asyncio.subprocess.PIPE
    )

    async def chunks() -> AsyncIterator[bytes]:
        assert tar.stdout is not None
        while chunk := await tar.stdout.read(1 << 20):
            yield chunk

    try:
        async with docker._query_chunked_post(
            "images/create",
            params={"fromSrc": "-", "repo": name, "tag": version},
            data=chunks(),
            headers={"Content-Type": "application/x-tar"},
        ) as response:
            await json_stream_list(response)
    finally:
        if tar.returncode is None and tar.stdout is not None and not tar.stdout.at_eof():
            tar.kill()
        rc = await tar.wait()
    if rc != 0:
        await docker.images.delete(tag, force=True)
        raise ClusterError(f"tar of the debootstrap tree {root} failed (exit {rc})")


def _mounts_under(path: Path) -> list[str]:
    with open("/proc/self/mounts") as f:
        return [m for m in (line.split()[1] for line in f) if m.startswith(f"{path}/")]


def _remove_tree(path: Path, log: Log) -> None:
    """Remove a debootstrap tree, but never through a mount left inside it."""
    for mount in sorted(_mounts_under(path), reverse=True):
        subprocess.run(["umount", "-l", mount], stderr=subprocess.DEVNULL, check=False)
    if _mounts_under(path):
        log(f"warning: mounts remain under {path}; left it in place, remove it by hand")
    else:
        shutil.rmtree(path, ignore_errors=True)


async def make_debian_base(
    *, tag: str = LOCAL_BASE, docker_url: str | None = None, log: Log = print
) -> str:
    """Make a Debian bookworm base image ``tag`` with debootstrap; return ``tag``.

    For machines with no container registry: runs ``debootstrap --variant=minbase
    bookworm`` in a temporary directory (about a minute; needs root, debootstrap
    and Debian's package mirror) and imports the tree into the engine.
    """
    debootstrap = shutil.which("debootstrap") or shutil.which("debootstrap", path="/usr/sbin")
    if debootstrap is None:
        raise ClusterError(
            f"no base image ({REGISTRY_BASE} cannot be pulled, {tag} is missing) and "
            "debootstrap, which makes one, is missing: "
            "install debootstrap: apt-get install -y debootstrap"
        )
    if os.geteuid() != 0:
        raise ClusterError(
            f"making the base image {tag} with debootstrap needs root: run this as root "
            f"(or make {REGISTRY_BASE} available to Docker)"
        )
    tmp = Path(tempfile.mkdtemp(prefix="jupyter-cluster-rootfs-"))
    root = tmp / "rootfs"
    try:
        log(f"making base image {tag}: debootstrap --variant=minbase bookworm (about a minute)")
        await _run(
            [debootstrap, "--variant=minbase", "bookworm", str(root)], log, _QUIET_DEBOOTSTRAP
        )
        for pattern in ("var/cache/apt/archives/*.deb", "var/lib/apt/lists/*_*"):
            for junk in root.glob(pattern):
                junk.unlink()  # downloaded packages and indexes: not needed in the image
        log(f"importing {root} as {tag}")
        async with _connect(docker_url) as docker:
            await _import_tree(docker, root, tag)
    finally:
        _remove_tree(tmp, log)
    return tag


async def _pick_base(docker: aiodocker.Docker, docker_url: str | None, log: Log) -> str:
    if await _exists(docker, REGISTRY_BASE):
        return REGISTRY_BASE
    try:
        await within(docker.images.pull(REGISTRY_BASE), PULL_TIMEOUT)
        return REGISTRY_BASE
    except (DockerError, asyncio.TimeoutError) as e:
        reason = e.message if isinstance(e, DockerError) else "timed out"
        log(f"cannot pull {REGISTRY_BASE} ({reason.strip()}); using local {LOCAL_BASE}")
    if not await _exists(docker, LOCAL_BASE):
        await make_debian_base(tag=LOCAL_BASE, docker_url=docker_url, log=log)
    return LOCAL_BASE


def _context() -> io.BytesIO:
    """The build context: the files of ``kernel/``, as a gzipped tar in memory."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for path in sorted(KERNEL_DIR.iterdir()):
            tar.add(path, arcname=path.name)
    buf.seek(0)
    return buf


async def build_kernel_image(
    *,
    tag: str = DEFAULT_IMAGE,
    docker_url: str | None = None,
    base: str | None = None,
    log: Log = print,
) -> str:
    """Build the default kernel image as ``tag`` on the engine at ``docker_url``; return ``tag``.

    ``base`` is the image to build on (the Dockerfile's ``BASE`` argument); by default
    ``debian:bookworm-slim`` if the engine has it or can pull it, else the local
    ``jupyter-cluster/debian:bookworm``, made with debootstrap when missing. Build
    output goes line by line to ``log``. Raises ClusterError, naming the failing
    step, if the build fails.
    """
    async with _connect(docker_url) as docker:
        if base is None:
            base = await _pick_base(docker, docker_url, log)
        log(f"building {tag} on {base}")
        step = ""
        try:
            async for item in docker.images.build(
                fileobj=_context(),
                encoding="gzip",
                tag=tag,
                buildargs={"BASE": base},
                forcerm=True,
                stream=True,
            ):
                for line in str(item.get("stream", "")).splitlines():
                    if line.strip():
                        step = line.strip() if line.startswith("Step ") else step
                        log(line.rstrip())
        except DockerError as e:
            at = f" at {step[:200]}" if step else ""
            raise ClusterError(f"building image {tag} failed{at}: {e.message.strip()}") from e
    log(f"built {tag}")
    return tag
