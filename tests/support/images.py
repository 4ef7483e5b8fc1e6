"""Images the tests build for themselves, from a Dockerfile under ``tests/images/``.

The integration tests' ``mpi_image`` fixture calls :func:`ensure_test_image`: it
builds ``tests/images/NAME/Dockerfile`` with the ``docker`` command line (there is
no registry to pull test images from; CI starts with none of them) and labels the
image with a hash of the Dockerfile and of its base image, so a later run reuses
it until either changes. An image whose Python package Debian lacks (Horovod) gets
its source release from PyPI through this venv's pip on the host, in ``sdists/`` of
its folder (git ignores it), as the README tells a user to build it: pip inside a
build cannot reach PyPI here. Test images are never removed: they are not a
session's resources, and other runs may use them.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from .constants import REPO
from .docker import docker

#: Where the Dockerfiles of the test images are, one directory per image.
IMAGES = REPO / "tests" / "images"
#: The label holding the hash of what an image was built from.
LABEL_BUILT_FROM = "jupyter-cluster.test-image-source"
#: The Horovod release the Horovod image builds (and the README downloads): its last,
#: which supports Debian's PyTorch 1.13.
HOROVOD = "horovod==0.28.1"
#: What a build may take: a few Debian packages from the network.
BUILD_TIMEOUT = 600


def _base_of(dockerfile: str) -> str:
    found = re.search(r"^FROM\s+(\S+)", dockerfile, re.MULTILINE)
    assert found, "the test image's Dockerfile names no base image"
    return found.group(1)


def download_sdists(requirements: Sequence[str], into: Path) -> None:
    """Download the source releases of pinned ``requirements`` (``name==version``)
    from PyPI into ``into`` with this venv's pip, without their dependencies (the
    image takes those from Debian). Raises AssertionError with pip's output if any
    is not pinned or pip fails."""
    for requirement in requirements:
        assert re.fullmatch(r"[A-Za-z0-9_.-]+==[A-Za-z0-9_.]+", requirement), requirement
    pip = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
    done = subprocess.run(
        [*pip, "--no-binary", ":all:", "--dest", str(into), *requirements],
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
    )
    assert done.returncode == 0, f"pip download {' '.join(requirements)}:\n{done.stderr}"


def ensure_test_image(name: str, tag: str, sdists: Sequence[str] = ()) -> str:
    """Build ``tests/images/NAME`` as ``tag`` unless an image of that tag was built
    from the same Dockerfile, base image and ``sdists``; return ``tag``.

    ``sdists``: pinned requirements whose source releases the Dockerfile finds in
    ``sdists/`` of its build context (see :func:`download_sdists`). Raises
    :class:`~tests.support.docker.DockerError` (with the build's output) if the base
    image is missing or the build fails.
    """
    context = IMAGES / name
    dockerfile = (context / "Dockerfile").read_text()
    base_id = docker("image", "inspect", "--format", "{{.Id}}", _base_of(dockerfile))
    made_of = "\0".join([dockerfile, base_id.stdout.strip(), *sdists])
    source = hashlib.sha256(made_of.encode()).hexdigest()
    found = docker(
        "image",
        "inspect",
        "--format",
        f'{{{{index .Config.Labels "{LABEL_BUILT_FROM}"}}}}',
        tag,
        check=False,
    )
    if found.returncode == 0 and found.stdout.strip() == source:
        return tag
    if sdists:  # afresh: an older release left there would be installed too
        shutil.rmtree(context / "sdists", ignore_errors=True)
        download_sdists(sdists, context / "sdists")
    docker(
        "build",
        "--quiet",
        "--force-rm",  # a failed step's container goes too
        "--label",
        f"{LABEL_BUILT_FROM}={source}",
        "--tag",
        tag,
        str(context),
        timeout=BUILD_TIMEOUT,
    )
    return tag


def build_variant(tag: str, dockerfile: str) -> str:
    """Build ``tag`` from ``dockerfile`` given inline (no context: a variant of the
    default image made with ``RUN``/``ENV`` lines, e.g. one without ipykernel); its tag.
    Docker's cache makes it at once when nothing changed."""
    subprocess.run(
        ["docker", "build", "-q", "-t", tag, "-"],
        input=dockerfile,
        text=True,
        check=True,
        capture_output=True,
        timeout=BUILD_TIMEOUT,
    )
    return tag
