"""The launch form: its fields, their limits, defaults and choices, and request checks.

One source for every launch form: ``GET cluster/api/launch-options`` serves
:func:`describe` (the ipywidgets form and the JupyterLab dialog are built from
it), and ``POST cluster/api/sessions`` checks its body with :func:`validate`
against the same :class:`LaunchPolicy`. Errors are
:class:`~jupyter_cluster.errors.InvalidRequest` naming the field, raised before
anything is created. Pure: no tornado, no Docker.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import InvalidRequest
from .apps import apps_dict, parse_apps
from .batch import (
    MAX_COMMAND,
    MAX_RETRIES,
    check_retries,
    parse_command,
    parse_lifetime,
    parse_retries,
)
from .launch_env import parse_env
from .models import SESSION_NAME_RE, ClusterMode, check_session_name
from .policy import FIELDS, MAX_BOOTSTRAP, LaunchPolicy, same_image
from .resources import MIN_MEM, Mount
from .units import MIN_CPUS, format_size, parse_cpu, parse_size

_HELP = {
    "image": "Container image of every container (one of the allowed images).",
    "size": "Number of containers: main1 plus size-1 sub containers.",
    "mode": "single-node puts every container on one agent; multi-node may spread them.",
    "cpu": "CPUs per container, e.g. 0.5 (or 500m).",
    "mem": "Memory per container, e.g. 512m or 2g.",
    "shm": "Shared memory (/dev/shm) per container, e.g. 64m.",
    "gpu": "GPUs per container.",
    "mounts": "Data folders mounted at /home/work/<name> in every container; NAME:ro for "
    "read-only.",
    "resource_group": "The group of agents to run on.",
    "name": "A name to refer to the session by (letters, digits, '.', '_', '-').",
    "bootstrap": "Shell command run as work in every container before it is ready.",
    "command": "A batch job: shell command run as work in main1 once the session runs; the "
    "session ends when it exits, with its exit code.",
    "max_lifetime": "End the session after this long, e.g. 90s, 30m, 2h (empty: no limit).",
    "retries": "Times a failing batch command is tried again.",
    "env": "Environment variables of every container, the kernel, exec, terminals and SSH "
    "(KEY=VALUE; shown by name only).",
    "apps": "Web apps in main1 by name (NAME=PORT), opened through the server's app proxy.",
    "start_kernel": "Start a Jupyter kernel in main1 once the session runs.",
}


def describe(policy: LaunchPolicy) -> dict[str, Any]:
    """The launch form as data: ordered fields with types, limits, defaults, choices."""
    fields: list[dict[str, Any]] = [
        {"name": "image", "type": "string", "choices": list(policy.images)},
        {"name": "size", "type": "integer", "minimum": 1, "maximum": policy.max_size},
        {
            "name": "mode",
            "type": "string",
            "choices": [m.value for m in ClusterMode],
        },
        {
            "name": "cpu",
            "type": "number",
            "minimum": MIN_CPUS,
            "maximum": policy.max_cpu,
            "step": 0.001,
        },
        _size_field("mem", MIN_MEM, policy.max_mem),
        _size_field("shm", 1, policy.max_shm),
        {"name": "gpu", "type": "integer", "minimum": 0, "maximum": policy.max_gpu},
        {
            "name": "mounts",
            "type": "array",
            "items": "string",
            "choices": list(policy.folders),
            "unique": True,
        },
        {"name": "resource_group", "type": "string", "choices": list(policy.resource_groups)},
        {
            "name": "name",
            "type": "string",
            "nullable": True,
            "pattern": SESSION_NAME_RE.pattern,
            "max_length": 64,
        },
        {"name": "bootstrap", "type": "string", "nullable": True, "max_length": MAX_BOOTSTRAP},
        {"name": "command", "type": "string", "nullable": True, "max_length": MAX_COMMAND},
        {"name": "max_lifetime", "type": "string", "nullable": True},
        {"name": "retries", "type": "integer", "minimum": 0, "maximum": MAX_RETRIES},
        {"name": "env", "type": "object", "items": "string", "nullable": True},
        {"name": "apps", "type": "object", "items": "integer", "nullable": True},
        {"name": "start_kernel", "type": "boolean"},
    ]
    for item in fields:
        item["label"] = item["name"].replace("_", " ").capitalize()
        item["help"] = _HELP[item["name"]]
        item["default"] = policy.default(item["name"])
    return {
        "fields": fields,
        "defaults": {f["name"]: f["default"] for f in fields},
        "limits": {
            "max_size": policy.max_size,
            "max_cpu": policy.max_cpu,
            "max_mem": policy.max_mem,
            "max_shm": policy.max_shm,
            "max_gpu": policy.max_gpu,
            "max_sessions_per_user": policy.max_sessions_per_user,
        },
    }


def _size_field(name: str, minimum: int, maximum: int) -> dict[str, Any]:
    return {
        "name": name,
        "type": "size",
        "minimum": format_size(minimum),
        "maximum": format_size(maximum),
        "minimum_bytes": minimum,
        "maximum_bytes": maximum,
    }


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


def _whole(name: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidRequest(f"{name}: expected a whole number, got {_kind(value)}", name)
    if not low <= value <= high:
        raise InvalidRequest(f"{name}: must be {low} to {high}, got {value}", name)
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
        raise InvalidRequest(
            f"{name}: must be {format_size(low)} to {format_size(high)}, got {format_size(n)}",
            name,
        )
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


def narrow_document(document: dict[str, Any], policy: LaunchPolicy) -> None:
    """Narrow the OpenAPI document's launch request schema to ``policy``'s images,
    groups, folders and limits (``GET openapi.json`` of a server with its own engine)."""
    props = document["components"]["schemas"]["LaunchRequest"]["properties"]
    props["image"]["enum"] = list(policy.images)
    props["resource_group"]["enum"] = list(policy.resource_groups)
    props["size"]["maximum"] = policy.max_size
    props["gpu"]["maximum"] = policy.max_gpu
    props["cpu"]["oneOf"][0]["maximum"] = policy.max_cpu
    props["mem"]["oneOf"][0].update(minimum=MIN_MEM, maximum=policy.max_mem)
    props["shm"]["oneOf"][0].update(minimum=1, maximum=policy.max_shm)
    folders = [f"{name}{flag}" for name in policy.folders for flag in ("", ":ro", ":rw")]
    if folders:
        props["mounts"]["items"]["enum"] = folders
    else:
        props["mounts"]["maxItems"] = 0
