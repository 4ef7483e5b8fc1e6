"""Image references, registries and pulls: the pure rules behind getting images to agents.

Used by the engine when a launch's image is missing on a placed agent (it is
pulled during PREPARING, see :mod:`jupyter_cluster.engine.launch.pulling`), by
``jupyter cluster image pull``/``push-to-agents`` (:mod:`jupyter_cluster.engine.images`)
and by the launch check of ``ClusterManager.allowed_registries``. Standard library
and ``errors`` only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidRequest
from .units import format_size

#: Where an image with no registry in its name comes from (Docker's rule).
DEFAULT_REGISTRY = "docker.io"

# Docker's reference grammar (distribution/reference), ASCII only.
_PATH = re.compile(r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*", re.ASCII)
_REGISTRY = re.compile(
    r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
    r"(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*(?::[0-9]+)?",
    re.ASCII,
)
_TAG = re.compile(r"\w[\w.-]{0,127}", re.ASCII)
_DIGEST = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}")
#: Docker refuses longer names (without ``:TAG``/``@DIGEST``, with its registry).
_MAX_NAME = 255
#: What a right reference looks like, for the messages.
EXAMPLES = "e.g. jupyter-cluster/kernel:latest or registry.example.com:5000/team/image:1.0"


def registry_of(image: str) -> str:
    """The registry ``image`` is pulled from: its first path component when that
    looks like a host (has a ``.`` or ``:``, or is ``localhost``), else Docker Hub."""
    first, sep, _ = image.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        return first
    return DEFAULT_REGISTRY


def reference_problem(image: str) -> str:
    """What keeps ``image`` from being an image reference Docker takes
    (``[REGISTRY/]PATH[:TAG][@DIGEST]``: the path in lower case, the registry a first
    part with "." or ":", or ``localhost``), or "" when nothing does. Called by
    :func:`check_reference`, the settings that name images, the CLI's ``image``
    commands, and the agents (the fake refuses as Docker does)."""
    if not image:
        return "the name is empty"
    name, at, digest = image.partition("@")
    if at and not _DIGEST.fullmatch(digest):
        return f"{digest!r} after '@' is no digest (sha256:<64 hex digits>)"
    parts = name.split("/")
    last, colon, tag = parts[-1].partition(":")
    if colon and not _TAG.fullmatch(tag):
        return (
            f"{tag!r} after ':' is no tag: use letters, digits, '_', '.' and '-', at most "
            "128, not starting with '.' or '-'"
        )
    parts[-1] = last
    first = parts[0]
    host = len(parts) > 1 and ("." in first or ":" in first or first == "localhost")
    # Docker also takes a first part that is a path part (``a_b.c/x``) for a host.
    if host and not (_REGISTRY.fullmatch(first) or _PATH.fullmatch(first)):
        return f"{first!r} is no registry host (HOST or HOST:PORT)"
    for part in parts[1:] if host else parts:
        if not _PATH.fullmatch(part):
            if _PATH.fullmatch(part.lower()):
                return "image names are lower case (only a registry host may have capitals)"
            return (
                f"{part!r} is no name part: use lower-case letters and digits, "
                "joined by '.', '_' or '-'"
            )
    # Docker counts the name as it pulls it: docker.io/library/python for python.
    full = "/".join(parts)
    if not host:
        full = f"{DEFAULT_REGISTRY}/{'library/' if len(parts) == 1 else ''}{full}"
    if len(full) > _MAX_NAME:
        counted = "" if host else f" (counting {DEFAULT_REGISTRY}/ as Docker does)"
        return f"the name is {len(full)} characters{counted}; Docker takes at most {_MAX_NAME}"
    return ""


def is_reference(image: str) -> bool:
    """Whether Docker takes ``image`` for an image reference (see :func:`reference_problem`)."""
    return not reference_problem(image)


def image_refusal(image: str) -> str:
    """What a front end says of ``image`` when it is no image reference (what is
    wrong, and what a right name looks like), or "" when it is one. The one wording
    of :func:`check_reference`, the settings and the CLI's ``image`` commands."""
    problem = reference_problem(image)
    return f"{image!r} is no image reference: {problem}; {EXAMPLES}" if problem else ""


def check_reference(image: str, field: str = "image") -> None:
    """Raise :class:`InvalidRequest` (naming ``field``) unless ``image`` is an image
    reference. Called by :meth:`LaunchSpec.create` and ``launch_options.validate``
    (REST, the forms, saved profiles), so a wrong name is refused before anything
    asks Docker; the CLI's ``image`` commands check with :func:`reference_problem`."""
    refusal = image_refusal(image)
    if refusal:
        raise InvalidRequest(f"{field}: {refusal}", field)


def split_reference(image: str) -> tuple[str, str]:
    """``(repository, tag)`` as Docker's pull API takes them; a digest stays in the
    repository (``name@sha256:…``, tag ""), and no tag means ``latest``."""
    if "@" in image:
        return image, ""
    head, _, last = image.rpartition("/")
    if ":" in last:
        name, tag = last.rsplit(":", 1)
        return (f"{head}/{name}" if head else name), tag
    return image, "latest"


def is_allowed(image: str, allowed: Sequence[str], always: Sequence[str] = ()) -> bool:
    """Whether ``image`` may be launched under ``allowed`` (registry hosts such as
    ``registry.example.com:5000``, or prefixes ending in ``/`` such as
    ``registry.example.com/team/``); empty allows everything. Images in ``always``
    (the default image) are always allowed."""
    if not allowed or image in always:
        return True
    registry = registry_of(image)
    for entry in allowed:
        if entry.endswith("/"):
            if image.startswith(entry):
                return True
        elif entry == registry:
            return True
    return False


def check_allowed(image: str, allowed: Sequence[str], always: Sequence[str] = ()) -> None:
    """Raise :class:`InvalidRequest` (field ``image``) unless :func:`is_allowed`."""
    if not is_allowed(image, allowed, always):
        raise InvalidRequest(
            f"image: {image!r} is not from an allowed registry; this site allows "
            f"{', '.join(allowed)} (ClusterManager.allowed_registries)",
            "image",
        )


def auth_for(image: str, credentials: Mapping[str, Mapping[str, str]]) -> dict[str, str] | None:
    """The Docker auth (username, password, serveraddress) for ``image``'s registry
    from ``ClusterManager.registry_credentials``, or None: pull anonymously."""
    registry = registry_of(image)
    entry = credentials.get(registry)
    if entry is None and registry == DEFAULT_REGISTRY:
        entry = credentials.get("index.docker.io") or credentials.get("https://index.docker.io/v1/")
    if not entry:
        return None
    return {
        "username": str(entry.get("username", "")),
        "password": str(entry.get("password", "")),
        "serveraddress": registry,
    }


def validate_credentials(credentials: Mapping[str, Any]) -> None:
    """Raise ValueError naming the entry when a registry's credentials are malformed
    (the settings check them at start)."""
    for registry, entry in credentials.items():
        if not isinstance(entry, Mapping) or not {"username", "password"} <= set(entry):
            raise ValueError(
                f"ClusterManager.registry_credentials[{registry!r}] must be a dict with "
                "'username' and 'password'"
            )
        extra = set(entry) - {"username", "password"}
        if extra:
            raise ValueError(
                f"ClusterManager.registry_credentials[{registry!r}]: unknown key(s) "
                f"{', '.join(sorted(extra))}; only 'username' and 'password'"
            )


@dataclass
class PullTally:
    """What an agent's pull has done so far, from Docker's progress messages."""

    layers: dict[str, tuple[int, int]] = field(default_factory=dict)  # id -> (current, total)
    done: set[str] = field(default_factory=set)

    def add(self, message: Mapping[str, Any]) -> None:
        """Count one message of Docker's pull stream (``status``, ``id``, ``progressDetail``)."""
        layer = str(message.get("id") or "")
        status = str(message.get("status") or "")
        if not layer or status.startswith(("Pulling from", "Digest", "Status")):
            return
        detail = message.get("progressDetail") or {}
        if status == "Downloading" and detail.get("total"):
            self.layers[layer] = (int(detail.get("current", 0)), int(detail["total"]))
        elif status in ("Download complete", "Pull complete", "Already exists"):
            current, total = self.layers.get(layer, (0, 0))
            self.layers[layer] = (total or current, total)
            self.done.add(layer)
        else:
            self.layers.setdefault(layer, (0, 0))

    def describe(self) -> str:
        """E.g. ``pulling: 3/7 layers, 120M of 310M``."""
        got = sum(c for c, _ in self.layers.values())
        total = sum(t for _, t in self.layers.values())
        size = f", {format_size(got)} of {format_size(total)}" if total else ""
        return f"pulling: {len(self.done)}/{len(self.layers)} layers{size}"


def pull_failure(agent: str, image: str, answer: str) -> str:
    """What a failed pull says: the agent, the image, the registry's answer and what
    to do about it."""
    registry = registry_of(image)
    low = answer.lower()
    if "unauthorized" in low or "authentication required" in low or "denied" in low:
        hint = (
            f"check the credentials for {registry} in ClusterManager.registry_credentials, "
            "and that the image exists"
        )
    elif "not found" in low or "manifest unknown" in low:
        hint = "check the image's name and tag"
    elif "timeout" in low or "timed out" in low:
        hint = (
            "raise ClusterManager.image_pull_timeout, or pre-pull with `jupyter cluster image pull`"
        )
    else:
        hint = f"is {registry} up and reachable from agent {agent}?"
    if registry == DEFAULT_REGISTRY:
        hint += (
            "; an image built on one machine can be copied to the agents with "
            f"`jupyter cluster image push-to-agents {image}`"
        )
    return f"agent {agent} could not pull {image} from {registry}: {answer}; {hint}"
