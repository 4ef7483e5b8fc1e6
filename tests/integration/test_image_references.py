"""Our image-reference rule agrees with Docker's, name by name.

``core.images.reference_problem`` refuses a name before anything asks Docker (a
launch, ``image build --tag``, ``image pull``), so it must refuse exactly what Docker
refuses: a stricter rule would turn away images users have, a looser one would let
Docker's own "invalid reference format" through. The witness is ``docker tag``,
which takes any name Docker takes for an image and nothing else; every tag it makes
is removed again.
"""

from __future__ import annotations

import pytest

from jupyter_cluster.core.images import is_reference, reference_problem
from tests.support.constants import IMAGE
from tests.support.docker import docker

pytestmark = pytest.mark.docker

#: Names at the edges of Docker's grammar, taken and refused.
NAMES = [
    "jc-ref-test",
    "jc-ref-test:3.11",
    "jc-ref-test/a/b:1",
    "localhost:5000/jc-ref-test",
    "Registry.Example.COM/jc-ref-test",
    "jc_ref.test/x",  # a path part before the slash counts as a host too
    "jc-ref__test",
    "jc-ref---test",
    "jc-ref.test_x",
    "jc-ref-test:V1.0_rc-2",
    "jc-ref-test:" + "t" * 128,
    "j" * 237,  # docker.io/library/ + 237 = 255
    "h.example/" + "j" * 245,
    "JC-Ref-Test/x",
    "jc-ref-test:",
    "jc-ref-test:.a",
    "jc-ref-test:-a",
    "-jc-ref-test",
    "jc-ref-test-",
    "jc-ref//test",
    "/jc-ref-test",
    "jc-ref-test/",
    "jc-ref test",
    "jc-ref___test",
    "jc-ref..test",
    "jc-ref_-test",
    "-h.example/x",
    "h.example:/x",
    "bad_Host.example/x",
    "jc-ref-test:" + "t" * 129,
    "j" * 238,
    "h.example/" + "j" * 246,
    "jc-ref-test:é",
    "jc-réf-test",
    "jc-ref-test:a/b",
    "",
]


def docker_takes(name: str) -> bool:
    """Whether ``docker tag`` takes ``name`` (the tag is removed again)."""
    result = docker("tag", IMAGE, name, check=False)
    if result.returncode == 0:
        docker("rmi", name)
        return True
    assert "reference" in result.stderr or "characters" in result.stderr, result.stderr
    return False


@pytest.mark.parametrize("name", NAMES)
def test_our_rule_takes_what_docker_takes(name: str) -> None:
    assert is_reference(name) is docker_takes(name), reference_problem(name)


def test_a_digest_is_taken_as_docker_takes_it() -> None:
    # ``docker tag`` refuses every digest, so ``image inspect`` is the witness here.
    digest = "sha256:" + "0" * 64
    for name, taken in ((f"jc-ref-test@{digest}", True), ("jc-ref-test@sha256:12", False)):
        result = docker("image", "inspect", name, check=False)
        assert result.returncode != 0  # no such image either way
        assert ("invalid reference format" not in result.stderr) is taken, result.stderr
        assert is_reference(name) is taken
