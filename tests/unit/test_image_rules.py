"""The pure rules of images: registries, allowed prefixes, credentials, pull progress."""

from __future__ import annotations

import pytest

from jupyter_cluster.core.images import (
    PullTally,
    auth_for,
    check_allowed,
    check_reference,
    is_allowed,
    is_reference,
    pull_failure,
    reference_problem,
    registry_of,
    split_reference,
    validate_credentials,
)
from jupyter_cluster.errors import InvalidRequest


@pytest.mark.parametrize(
    ("image", "registry"),
    [
        ("python", "docker.io"),
        ("library/python:3.11", "docker.io"),
        ("jupyter-cluster/kernel:latest", "docker.io"),
        ("registry.example.com/team/img:1", "registry.example.com"),
        ("10.0.0.5:5000/img", "10.0.0.5:5000"),
        ("localhost/img", "localhost"),
        ("localhost:5000/a/b@sha256:" + "0" * 64, "localhost:5000"),
    ],
)
def test_registry_of_follows_dockers_rule(image: str, registry: str) -> None:
    assert registry_of(image) == registry


@pytest.mark.parametrize(
    ("image", "parts"),
    [
        ("python", ("python", "latest")),
        ("python:3.11", ("python", "3.11")),
        ("10.0.0.5:5000/img", ("10.0.0.5:5000/img", "latest")),
        ("10.0.0.5:5000/team/img:v2", ("10.0.0.5:5000/team/img", "v2")),
        ("img@sha256:abc", ("img@sha256:abc", "")),
    ],
)
def test_split_reference_keeps_the_registry_port_out_of_the_tag(
    image: str, parts: tuple[str, str]
) -> None:
    assert split_reference(image) == parts


def test_allowed_registries_match_hosts_and_prefixes() -> None:
    allowed = ["registry.example.com:5000", "docker.io/library/", "ghcr.io/team/"]
    assert is_allowed("registry.example.com:5000/any/img:1", allowed)
    assert is_allowed("ghcr.io/team/img", allowed)
    assert not is_allowed("ghcr.io/other/img", allowed)
    assert not is_allowed("python:3.11", allowed)  # docker.io, but no prefix written out
    assert not is_allowed("evil.example.com/registry.example.com:5000/x", allowed)
    assert is_allowed(
        "jupyter-cluster/kernel:latest", allowed, always=["jupyter-cluster/kernel:latest"]
    )
    assert is_allowed("anything", [])


def test_a_refused_image_names_the_field_and_the_setting() -> None:
    with pytest.raises(InvalidRequest) as caught:
        check_allowed("ghcr.io/other/img", ["ghcr.io/team/"])
    assert caught.value.field == "image"
    assert "ghcr.io/team/" in str(caught.value)
    assert "allowed_registries" in str(caught.value)


def test_credentials_are_found_by_the_images_registry() -> None:
    creds = {"reg.local:5000": {"username": "u", "password": "p"}}
    assert auth_for("reg.local:5000/img:1", creds) == {
        "username": "u",
        "password": "p",
        "serveraddress": "reg.local:5000",
    }
    assert auth_for("other.local/img", creds) is None
    assert auth_for("python", {"docker.io": {"username": "a", "password": "b"}}) is not None


@pytest.mark.parametrize(
    "creds",
    [{"r": "secret"}, {"r": {"username": "u"}}, {"r": {"username": "u", "password": "p", "x": 1}}],
)
def test_malformed_credentials_are_refused_naming_the_registry(creds: dict) -> None:
    with pytest.raises(ValueError, match=r"registry_credentials\['r'\]"):
        validate_credentials(creds)


def test_pull_tally_counts_layers_and_bytes() -> None:
    tally = PullTally()
    for message in (
        {"status": "Pulling from team/img", "id": "v1"},
        {"status": "Pulling fs layer", "id": "a"},
        {"status": "Pulling fs layer", "id": "b"},
        {"status": "Downloading", "id": "a", "progressDetail": {"current": 1024, "total": 2048}},
        {"status": "Downloading", "id": "b", "progressDetail": {"current": 0, "total": 2048}},
    ):
        tally.add(message)
    assert tally.describe() == "pulling: 0/2 layers, 1k of 4k"
    tally.add({"status": "Pull complete", "id": "a"})
    tally.add({"status": "Already exists", "id": "c"})
    assert tally.describe() == "pulling: 2/3 layers, 2k of 4k"


def test_pull_failures_say_what_to_do() -> None:
    denied = pull_failure("agent2", "reg:5000/img", "unauthorized: authentication required")
    assert "agent agent2" in denied and "reg:5000" in denied
    assert "registry_credentials" in denied
    unknown = pull_failure("a", "reg:5000/nope", "manifest unknown")
    assert "name and tag" in unknown
    local = pull_failure("a", "jupyter-cluster/kernel:latest", "connection refused")
    assert "push-to-agents jupyter-cluster/kernel:latest" in local


@pytest.mark.parametrize(
    ("image", "says"),
    [
        ("", "the name is empty"),
        ("Jupyter-Cluster/Kernel", "image names are lower case"),
        ("kernel:", "'' after ':' is no tag"),
        ("kernel:.1", "'.1' after ':' is no tag"),
        ("a//b", "'' is no name part"),
        ("a b", "'a b' is no name part"),
        ("x@sha256:12", "'sha256:12' after '@' is no digest"),
        ("-h.example/x", "'-h.example' is no registry host"),
        ("p" * 238, "the name is 256 characters (counting docker.io/ as Docker does)"),
        ("h.example/" + "p" * 246, "the name is 256 characters; Docker takes at most 255"),
    ],
)
def test_what_is_no_image_reference_says_why(image: str, says: str) -> None:
    assert not is_reference(image)
    assert says in reference_problem(image)
    with pytest.raises(InvalidRequest) as caught:
        check_reference(image, "tag")
    assert caught.value.field == "tag"
    assert str(caught.value).startswith(f"tag: {image!r} is no image reference: {says}")
    assert "e.g. jupyter-cluster/kernel:latest" in str(caught.value)


@pytest.mark.parametrize(
    "image",
    ["python", "jupyter-cluster/kernel:latest", "Host.Example:5000/team/x:V1_rc-2", "p" * 237],
)
def test_image_references_pass(image: str) -> None:
    assert reference_problem(image) == ""
    check_reference(image)
