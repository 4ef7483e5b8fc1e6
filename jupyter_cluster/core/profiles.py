"""Launch profiles: named sets of launch fields a launch starts from.

A profile is a name, a description and some of the REST launch body's fields
(:data:`~jupyter_cluster.core.policy.FIELDS`); the site defines them in
``c.ClusterApp.launch_profiles`` (each visible to everyone or to some Hub
groups). A launch naming one (``profile`` in the REST body) takes the profile's
fields, then the request's own on top (:func:`resolve`). :func:`listing` tells
each visible profile's launch form whether the caller's policy can launch it,
with :func:`~jupyter_cluster.core.launch_options.validate`'s reason when not.
Used by the local launch gate (:mod:`jupyter_cluster.engine.admission`) and the
launch settings (:mod:`jupyter_cluster.config`). Pure: no tornado, no Docker.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidRequest
from .launch_options import NO_LIMIT, validate
from .models import SESSION_NAME_RE
from .policy import FIELDS, LaunchPolicy
from .resources import Mount

#: The keys of one profile in ``c.ClusterApp.launch_profiles``.
PROFILE_KEYS = ("description", "groups", "fields")


@dataclass(frozen=True)
class Profile:
    """A named set of launch fields; ``groups`` empty: visible to everyone."""

    name: str
    fields: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""
    groups: tuple[str, ...] = ()

    def visible_to(self, groups: Iterable[str]) -> bool:
        """Whether a user in Hub ``groups`` sees this profile."""
        return not self.groups or bool(set(self.groups) & set(groups))

    def to_dict(self) -> dict[str, Any]:
        """The profile as the REST API lists it."""
        return {
            "name": self.name,
            "description": self.description,
            "groups": list(self.groups),
            "fields": dict(self.fields),
        }


def make_profile(name: Any, value: Any) -> Profile:
    """A profile from its config entry ``{"description", "groups", "fields"}``;
    :class:`InvalidRequest` naming what is wrong (the fields are checked against a
    policy only when used, as a user's limits differ)."""
    if not isinstance(name, str) or not SESSION_NAME_RE.fullmatch(name):
        raise InvalidRequest(
            f"profile: {name!r} is not a profile name (letters, digits, '.', '_', '-')",
            "profile",
        )
    if not isinstance(value, Mapping):
        raise InvalidRequest(
            f"profile {name}: expected an object with {', '.join(PROFILE_KEYS)}", "profile"
        )
    for key in value:
        if key not in PROFILE_KEYS:
            raise InvalidRequest(
                f"profile {name}: unknown key {key!r}; the keys are {', '.join(PROFILE_KEYS)}",
                "profile",
            )
    fields = value.get("fields", {})
    if not isinstance(fields, Mapping):
        raise InvalidRequest(f"profile {name}: fields must be an object", "profile")
    for key in fields:
        if key not in FIELDS:
            raise InvalidRequest(
                f"profile {name}: {key!r} is not a launch field; the fields are "
                + ", ".join(FIELDS),
                "profile",
            )
    description = value.get("description", "")
    groups = value.get("groups", [])
    if not isinstance(description, str):
        raise InvalidRequest(f"profile {name}: description must be text", "profile")
    if not isinstance(groups, (list, tuple)) or not all(isinstance(g, str) for g in groups):
        raise InvalidRequest(f"profile {name}: groups must be a list of group names", "profile")
    return Profile(name, dict(fields), description, tuple(groups))


def check_values(profile: Profile) -> Profile:
    """``profile`` when each of its fields is a launch value that some limits would
    allow; :class:`InvalidRequest` naming the profile and the field when one never is
    (a size of 0, a CPU count of -1, an unknown mode, a variable with no name). The
    limits of whoever launches it (sizes, images, groups, folders) are not checked
    here: they differ between users and change, so a launch checks them, and the
    launch form shows a profile over them as disabled, with why. Called when a user
    saves a profile (REST, and the CLI with a local engine)."""
    fields = dict(profile.fields)
    if fields.get("retries") and not fields.get("command"):
        fields["command"] = "true"  # a job's retries may wait for its command at launch
    try:
        validate(fields, _no_limits(fields))
    except InvalidRequest as exc:
        raise InvalidRequest(f"profile {profile.name}: {exc}", exc.field) from None
    return profile


def _no_limits(fields: Mapping[str, Any]) -> LaunchPolicy:
    """A policy that allows whatever a site's limits could: the profile's own image,
    group, folders and variable names, and no maximum."""

    def own(key: str, fallback: tuple[str, ...]) -> tuple[str, ...]:
        value = fields.get(key)
        return (value,) if isinstance(value, str) else fallback

    mounts, env = fields.get("mounts"), fields.get("env")
    folders = (
        [Mount.parse(m).name for m in mounts if isinstance(m, str)]
        if isinstance(mounts, list)
        else []
    )
    names = list(env) if isinstance(env, Mapping) else []
    if isinstance(env, list):
        names = [item.partition("=")[0] for item in env if isinstance(item, str)]
    return LaunchPolicy(
        images=own("image", ("any",)),
        max_size=NO_LIMIT,
        max_cpu=math.inf,
        max_mem=NO_LIMIT,
        max_shm=NO_LIMIT,
        max_gpu=NO_LIMIT,
        resource_groups=own("resource_group", ("default",)),
        folders=tuple(folders),
        env_allowed=tuple(n for n in names if isinstance(n, str)),
    )


def parse_profiles(config: Mapping[str, Any]) -> tuple[dict[str, Profile], list[str]]:
    """The profiles of ``c.ClusterApp.launch_profiles`` and what was wrong with the
    ones left out (the launch settings log them)."""
    profiles: dict[str, Profile] = {}
    problems: list[str] = []
    for name, value in config.items():
        try:
            profiles[name] = make_profile(name, value)
        except InvalidRequest as exc:
            problems.append(f"ignored: {exc}")
    return profiles, problems


def resolve(body: Any, profiles: Mapping[str, Profile], groups: Sequence[str] = ()) -> Any:
    """The launch body with its ``profile`` replaced by that profile's fields, the
    body's own fields on top; a body without ``profile`` is returned as it is.
    :class:`InvalidRequest` when no profile visible to ``groups`` has the name."""
    if not isinstance(body, dict) or "profile" not in body:
        return body
    rest = {k: v for k, v in body.items() if k != "profile"}
    name = body["profile"]
    if name is None:
        return rest
    found = profiles.get(name) if isinstance(name, str) else None
    if found is None or not found.visible_to(groups):
        known = ", ".join(p.name for p in profiles.values() if p.visible_to(groups))
        raise InvalidRequest(
            f"profile: no launch profile named {name!r}; known profiles: {known or 'none'}",
            "profile",
        )
    return merge(found, rest)


def merge(profile: Profile, overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The profile's fields, then the explicit ``overrides``."""
    return {**profile.fields, **overrides}


def unmet(profile: Profile, policy: LaunchPolicy) -> str:
    """Why ``policy`` cannot launch ``profile`` as it is ('' when it can)."""
    try:
        validate(dict(profile.fields), policy)
    except InvalidRequest as exc:
        return str(exc)
    return ""


def listing(
    profiles: Mapping[str, Profile], policy: LaunchPolicy, groups: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """The profiles visible to ``groups`` for the launch form (``GET launch-options``):
    each with ``disabled`` and the ``reason`` when ``policy`` cannot launch it."""
    result = []
    for profile in profiles.values():
        if not profile.visible_to(groups):
            continue
        reason = unmet(profile, policy)
        result.append({**profile.to_dict(), "disabled": bool(reason), "reason": reason})
    return result
