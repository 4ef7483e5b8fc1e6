"""Launch requests checked against the launch form's limits, defaults and choices.

``POST cluster/api/sessions`` checks its body with :func:`validate` against the
:class:`LaunchPolicy` that :mod:`.launch_form` describes to the forms. Errors are
:class:`~jupyter_cluster.errors.InvalidRequest` naming the field, raised before
anything is created. Pure: no tornado, no Docker.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import InvalidRequest
from .apps import apps_dict, parse_apps
from .batch import check_retries, parse_command, parse_retries
from .images import check_reference
from .launch_env import parse_env
from .models import ClusterMode, check_session_name
from .policy import FIELDS, MAX_BOOTSTRAP, LaunchPolicy, same_image
from .resources import MIN_MEM, Mount
from .time_limits import parse_lifetime
from .units import format_size, parse_cpu, parse_size


def _text(name: str, value: Any, *, nullable: bool = False) -> str | None:
    if value is None and nullable:
        return None
    if not isinstance(value, str):
        kind = "text or null" if nullable else "text"
        raise InvalidRequest(f"{name}: expected {kind}, got {_kind(value)}", name)
    if "\x00" in value:
        raise InvalidRequest(f"{name}: the text contains a NUL character", name)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidRequest(f"{name}: the text is not valid Unicode", name) from None
    return value


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "text"}.get(
        type(value), "a list" if isinstance(value, list) else "an object"
    )


#: A maximum that stands for none (a policy of no limits, e.g. a profile's own check).
NO_LIMIT = 1 << 62


def _whole(name: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidRequest(f"{name}: expected a whole number, got {_kind(value)}", name)
    if not low <= value <= high:
        upto = f"at least {low}" if high >= NO_LIMIT else f"{low} to {high}"
        raise InvalidRequest(f"{name}: must be {upto}, got {value}", name)
    return value


def _size(name: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise InvalidRequest(f"{name}: expected a size such as 512m, got {_kind(value)}", name)
    if isinstance(value, str):
        _text(name, value)
    try:
        n = parse_size(value, name)
    except OverflowError:  # more digits than a float holds
        n = high + 1
    if not low <= n <= high:
        upto = f"at least {format_size(low)}"
        if high < NO_LIMIT:
            upto = f"{format_size(low)} to {format_size(high)}"
        raise InvalidRequest(f"{name}: must be {upto}, got {format_size(n)}", name)
    return n


def _cpu(value: Any, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise InvalidRequest(f"cpu: expected a CPU count such as 0.5, got {_kind(value)}", "cpu")
    if isinstance(value, str):
        _text("cpu", value)
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidRequest("cpu: the CPU count must be a finite number", "cpu")
    try:
        cpus = parse_cpu(value, "cpu")
    except OverflowError:  # e.g. 1e308: too large to count in millicores
        cpus = math.inf
    if cpus > high + 1e-9:
        raise InvalidRequest(f"cpu: at most {high:g} CPUs per container, got {cpus:g}", "cpu")
    return cpus


def _mounts(value: Any, folders: Sequence[str]) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidRequest(
            f"mounts: expected a list of folder names, got {_kind(value)}", "mounts"
        )
    result = []
    for item in value:
        text = _text("mounts", item)
        assert text is not None
        mount = Mount.parse(text)
        if mount.name not in folders:
            known = ", ".join(folders) or "none yet"
            raise InvalidRequest(
                f"mounts: no data folder named {mount.name!r}; known folders: {known}", "mounts"
            )
        result.append(str(mount))
    return result


def validate(body: Any, policy: LaunchPolicy) -> tuple[dict[str, Any], bool]:
    """Check a launch request against ``policy``.

    Returns keyword arguments for ``ClusterManager.make_spec`` and whether to
    start a kernel. Missing fields take the policy's defaults. Raises
    :class:`InvalidRequest` naming the first wrong field.
    """
    if not isinstance(body, dict):
        raise InvalidRequest(f"body: expected a JSON object, got {_kind(body)}", "body")
    for key in body:
        if key not in FIELDS:
            raise InvalidRequest(
                f"{key or '(no name)'}: unknown field; the fields are {', '.join(FIELDS)}",
                str(key),
            )
    values = {name: body[name] if name in body else policy.default(name) for name in FIELDS}
    image = _text("image", values["image"])
    assert image is not None
    check_reference(image.strip())
    if not any(same_image(image, allowed) for allowed in policy.images):
        raise InvalidRequest(
            f"image: {image!r} is not allowed here; use one of {', '.join(policy.images)}",
            "image",
        )
    mode = _text("mode", values["mode"])
    ClusterMode.parse(mode or "")
    group = _text("resource_group", values["resource_group"])
    if group not in policy.resource_groups:
        raise InvalidRequest(
            f"resource_group: no resource group {group!r}; known groups: "
            + (", ".join(policy.resource_groups) or "none"),
            "resource_group",
        )
    name = _text("name", values["name"], nullable=True)
    if name:
        check_session_name(name)
    bootstrap = _text("bootstrap", values["bootstrap"], nullable=True)
    if bootstrap is not None and len(bootstrap) > MAX_BOOTSTRAP:
        raise InvalidRequest(f"bootstrap: at most {MAX_BOOTSTRAP} characters", "bootstrap")
    command = parse_command(values["command"])
    retries = parse_retries(values["retries"] if values["retries"] is not None else 0)
    check_retries(command, retries)
    batch = {
        "command": command,
        "max_lifetime": parse_lifetime(values["max_lifetime"]),
        "retries": retries,
    }
    env = values["env"]
    if env is not None and not isinstance(env, dict):
        raise InvalidRequest(
            f"env: expected an object of names and values, got {_kind(env)}", "env"
        )
    env = dict(parse_env(env, policy.env_allowed)) or None
    if values["apps"] is not None and not isinstance(values["apps"], dict):
        raise InvalidRequest(
            f"apps: expected an object of names and ports, got {_kind(values['apps'])}", "apps"
        )
    apps = apps_dict(parse_apps(values["apps"])) or None
    start_kernel = values["start_kernel"]
    if not isinstance(start_kernel, bool):
        raise InvalidRequest(
            f"start_kernel: expected true or false, got {_kind(start_kernel)}", "start_kernel"
        )
    fields = {
        "image": image.strip(),
        "size": _whole("size", values["size"], 1, policy.max_size),
        "mode": mode,
        "cpu": _cpu(values["cpu"], policy.max_cpu),
        "mem": _size("mem", values["mem"], MIN_MEM, policy.max_mem),
        "shm": _size("shm", values["shm"], 1, policy.max_shm),
        "gpu": _whole("gpu", values["gpu"], 0, policy.max_gpu),
        "mounts": _mounts(values["mounts"], policy.folders),
        "resource_group": group,
        "name": name or None,
        "bootstrap": bootstrap or None,
        **batch,
        "env": env,
        "apps": apps,
    }
    return fields, start_kernel


def launchable_defaults(
    requested: Mapping[str, Any], policy_for: Callable[[dict[str, Any]], LaunchPolicy]
) -> tuple[dict[str, Any], list[str]]:
    """The configured form defaults that make a valid launch, and why others were dropped.

    Unknown keys are dropped; then each default that :func:`validate` refuses is
    dropped until an empty request validates. ``policy_for(defaults)`` builds the
    policy with those defaults. Used by :class:`~jupyter_cluster.config.LaunchSettings`.
    """
    problems: list[str] = []
    kept: dict[str, Any] = {}
    for key, value in requested.items():
        if key in FIELDS and key != "name":
            kept[key] = value
        else:
            problems.append(f"{key!r} is not a launch field")
    while True:
        try:
            validate({}, policy_for(kept))
            return kept, problems
        except InvalidRequest as exc:
            if exc.field not in kept:
                problems.append(f"the launch form's default is not launchable: {exc}")
                return kept, problems
            problems.append(f"ignored: {exc}")
            del kept[exc.field]
