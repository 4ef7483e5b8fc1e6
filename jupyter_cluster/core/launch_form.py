"""The launch form as data: its fields, their limits, defaults, choices and help.

One source for every launch form: ``GET cluster/api/launch-options`` serves
:func:`describe` (the ipywidgets form and the JupyterLab dialog are built from it),
and :func:`narrow_document` fits the OpenAPI document's launch request to the same
:class:`LaunchPolicy` that :func:`~.launch_options.validate` checks requests
against. Called by :mod:`jupyter_cluster.engine.admission`. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .batch import MAX_COMMAND, MAX_RETRIES
from .models import SESSION_NAME_RE, ClusterMode
from .policy import MAX_BOOTSTRAP, LaunchPolicy
from .resources import MIN_MEM, Resources
from .units import MIN_CPUS, format_size

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


def room_note(
    agents: Sequence[Mapping[str, Any]], group: str, per: Resources, size: int, mode: str
) -> str:
    """What the launch form says of room for ``size`` containers of ``per`` in
    ``group`` right now, from the agents as ``agents_info`` lists them: the first
    reachable agent with room for all, or what the session will do without one. For
    the notebook's launch form (:mod:`jupyter_cluster.widgets`)."""
    for agent in agents:
        free = agent["free"]
        if (
            agent["resource_group"] == group
            and agent["reachable"]
            and free["cpu"] + 1e-9 >= per.cpu * size
            and free["mem"] >= per.mem * size
            and free["gpu"] >= per.gpu * size
        ):
            return f"fits on agent {agent['id']} now"
    return "no single agent has room now: " + (
        "it will be PENDING until one has"
        if mode == "single-node"
        else "it will be spread over agents, or wait"
    )
