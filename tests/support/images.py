"""Images the tests build for themselves, from a Dockerfile under ``tests/images/``.

The integration tests' ``mpi_image`` fixture calls :func:`ensure_test_image`: it
builds ``tests/images/NAME/Dockerfile`` with the ``docker`` command line (there is
no registry to pull test images from; CI starts with none of them) and labels the
image with a hash of the Dockerfile and of its base image, so a later run reuses
it until either changes. Test images are never removed: they are not a session's
resources, and other runs may use them.
"""

from __future__ import annotations

import hashlib
import re

from .constants import REPO
from .docker import docker

#: Where the Dockerfiles of the test images are, one directory per image.
IMAGES = REPO / "tests" / "images"
#: The label holding the hash of what an image was built from.
LABEL_BUILT_FROM = "jupyter-cluster.test-image-source"
#: What a build may take: a few Debian packages from the network.
BUILD_TIMEOUT = 600


def _base_of(dockerfile: str) -> str:
    found = re.search(r"^FROM\s+(\S+)", dockerfile, re.MULTILINE)
    assert found, "the test image's Dockerfile names no base image"
    return found.group(1)


def ensure_test_image(name: str, tag: str) -> str:
    """Build ``tests/images/NAME`` as ``tag`` unless an image of that tag was built
    from the same Dockerfile on the same base image; return ``tag``.

    Raises :class:`~tests.support.docker.DockerError` (with the build's output) if
    the base image is missing or the build fails.
    """
    context = IMAGES / name
    dockerfile = (context / "Dockerfile").read_text()
    base_id = docker("image", "inspect", "--format", "{{.Id}}", _base_of(dockerfile))
    source = hashlib.sha256(f"{dockerfile}\0{base_id.stdout.strip()}".encode()).hexdigest()
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
    docker(
        "build",
        "--quiet",
        "--label",
        f"{LABEL_BUILT_FROM}={source}",
        "--tag",
        tag,
        str(context),
        timeout=BUILD_TIMEOUT,
    )
    return tag
