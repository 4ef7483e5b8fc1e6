"""What a launch asks for, checked: the session name rule, the cluster modes, :class:`LaunchSpec`.

Validation of user input lives here (:meth:`LaunchSpec.create`), so every front
end rejects the same things with the same messages. :mod:`.models` hands these
names on with the session model; import them from either. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from ..errors import InvalidRequest
from .apps import Apps, apps_dict, parse_apps
from .batch import check_retries, parse_command, parse_retries
from .images import check_reference
from .launch_env import Env, parse_env, stored_env
from .resources import Mount, Resources
from .time_limits import parse_lifetime
from .units import whole_number

SESSION_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def check_session_name(name: object) -> None:
    """Raise InvalidRequest (field ``name``) unless ``name`` is a valid session name.

    The one rule and message for names, used by :meth:`LaunchSpec.create` and the
    launch form's :func:`~jupyter_cluster.core.launch_options.validate`.
    """
    if not isinstance(name, str) or not SESSION_NAME_RE.fullmatch(name):
        raise InvalidRequest(
            f"name: {name!r} is not a valid session name; use letters, digits, '.', '_' "
            "and '-' (at most 64, starting with a letter or digit)",
            "name",
        )


def parse_priority(value: object) -> int:
    """A launch's priority from user input (None or "" mean 0); InvalidRequest (field
    ``priority``) unless it is a whole number. Called by :meth:`LaunchSpec.create`."""
    if value is None or value == "":
        return 0
    try:
        n = whole_number(value)
    except ValueError:
        raise InvalidRequest(f"priority: {value!r} is not a whole number", "priority") from None
    return n


class ClusterMode(str, Enum):
    """Where the containers of a session may be placed."""

    SINGLE_NODE = "single-node"
    MULTI_NODE = "multi-node"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def parse(cls, value: str) -> ClusterMode:
        """Read a mode from user input; raise :class:`InvalidRequest` if unknown."""
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            raise InvalidRequest(
                f"mode: unknown cluster mode {value!r}; use single-node or multi-node", "mode"
            ) from None


#: The launch fields a person gives (:meth:`LaunchSpec.create`'s keywords but the
#: site's ``max_size`` and ``env_allowed``), as the notebook API and CLI name them.
LAUNCH_FIELDS = (
    "image",
    "size",
    "mode",
    "cpu",
    "mem",
    "shm",
    "gpu",
    "mounts",
    "resource_group",
    "name",
    "bootstrap",
    "command",
    "max_lifetime",
    "retries",
    "env",
    "apps",
    "priority",
)


def check_fields(fields: Iterable[str]) -> None:
    """Raise :class:`InvalidRequest` naming the first of ``fields`` that is no launch
    field (``launch(sizes=2)`` in a notebook ended in a TypeError)."""
    for name in fields:
        if name not in LAUNCH_FIELDS:
            raise InvalidRequest(
                f"{name}: unknown launch field; the fields are {', '.join(LAUNCH_FIELDS)}", name
            )


@dataclass(frozen=True)
class LaunchSpec:
    """Everything a user asks for when launching a session, already validated."""

    image: str
    size: int = 1
    mode: ClusterMode = ClusterMode.SINGLE_NODE
    resources: Resources = field(default_factory=Resources)
    mounts: tuple[Mount, ...] = ()
    resource_group: str = "default"
    name: str | None = None
    bootstrap: str | None = None
    #: A batch job's shell command, its lifetime limit (seconds) and extra tries
    #: (:mod:`.batch`); None, None, 0 for an interactive session.
    command: str | None = None
    max_lifetime: float | None = None
    retries: int = 0
    #: The user's variables (:mod:`.launch_env`); shown by name only.
    env: Env = ()
    #: A host folder (the Jupyter server's root) mounted read-write in every
    #: container at ``core.workdir.MOUNT_POINT``; set only by the provisioner in
    #: single-user mode, never from launch input (:mod:`.workdir`).
    workdir: str | None = None
    #: Web apps in main1 by name (:mod:`.apps`): listed, opened through the app proxy.
    apps: Apps = ()
    #: Its place in a queue ordered by priority (``ClusterManager.queue_order``):
    #: higher goes first. The range a user may ask for is the policy's to check.
    priority: int = 0

    @classmethod
    def create(
        cls,
        *,
        image: str,
        size: int | str = 1,
        mode: str | ClusterMode = ClusterMode.SINGLE_NODE,
        cpu: str | float = 1.0,
        mem: str | int = "1g",
        shm: str | int = "64m",
        gpu: str | int = 0,
        mounts: Iterable[str | Mount] = (),
        resource_group: str = "default",
        name: str | None = None,
        bootstrap: str | None = None,
        max_size: int = 16,
        command: object = None,
        max_lifetime: object = None,
        retries: object = 0,
        env: object = None,
        env_allowed: Iterable[str] = (),
        apps: object = None,
        priority: object = 0,
    ) -> LaunchSpec:
        """Validate raw user input (CLI flags, JSON fields) into a spec.

        Raises :class:`InvalidRequest` naming the first wrong field; nothing else
        checks these again.
        """
        # Surrounding blanks (pasted text) are trimmed; inner ones are an error.
        if (
            not isinstance(image, str)
            or not image.strip()
            or any(c.isspace() for c in image.strip())
        ):
            raise InvalidRequest(
                "image: give an image name such as jupyter-cluster/kernel", "image"
            )
        check_reference(image.strip())
        try:
            n = whole_number(size)
        except ValueError:
            raise InvalidRequest(f"size: {size!r} is not a whole number", "size") from None
        if not 1 <= n <= max_size:
            raise InvalidRequest(f"size: the cluster size must be 1 to {max_size}, got {n}", "size")
        if mounts is None:  # JSON null
            mounts = ()
        if isinstance(mounts, (str, bytes)) or not isinstance(mounts, Iterable):
            # Iterating a string would mount one folder per character.
            raise InvalidRequest(
                f"mounts: give a list of folder names such as ['data', 'models:ro'], "
                f"not the text {mounts!r}",
                "mounts",
            )
        parsed_mounts = tuple(m if isinstance(m, Mount) else Mount.parse(m) for m in mounts)
        names = [m.name for m in parsed_mounts]
        for i, folder in enumerate(names):
            if folder in names[:i]:
                raise InvalidRequest(
                    f"mounts: the folder {folder!r} is named twice; mount each folder once",
                    "mounts",
                )
        if name not in (None, ""):  # "" means no name, as forms send it
            check_session_name(name)
        if not isinstance(resource_group, str) or not resource_group:
            raise InvalidRequest("resource_group: give a resource group name", "resource_group")
        if bootstrap is not None and not isinstance(bootstrap, str):
            raise InvalidRequest("bootstrap: give a shell command as text", "bootstrap")
        check_retries(parse_command(command), parse_retries(retries or 0))
        return cls(
            image=image.strip(),
            size=n,
            mode=mode if isinstance(mode, ClusterMode) else ClusterMode.parse(mode),
            resources=Resources.parse(cpu=cpu, mem=mem, shm=shm, gpu=gpu),
            mounts=parsed_mounts,
            resource_group=resource_group,
            name=name or None,
            bootstrap=bootstrap or None,
            command=parse_command(command),
            max_lifetime=parse_lifetime(max_lifetime),
            retries=parse_retries(retries or 0),
            env=parse_env(env, env_allowed),
            apps=parse_apps(apps),
            priority=parse_priority(priority),
        )

    def to_dict(self) -> dict[str, Any]:
        """The spec as given, variables' values included: for the store (0600) and
        kernelspecs, never for display (see :meth:`Session.to_dict`)."""
        return {
            "image": self.image,
            "size": self.size,
            "mode": self.mode.value,
            "resources": self.resources.to_dict(),
            "mounts": [str(m) for m in self.mounts],
            "resource_group": self.resource_group,
            "name": self.name,
            "bootstrap": self.bootstrap,
            "command": self.command,
            "max_lifetime": self.max_lifetime,
            "retries": self.retries,
            "env": dict(self.env),
            "workdir": self.workdir,
            "apps": apps_dict(self.apps),
            "priority": self.priority,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LaunchSpec:
        return cls(
            image=data["image"],
            size=int(data["size"]),
            mode=ClusterMode(data["mode"]),
            resources=Resources.from_dict(data["resources"]),
            mounts=tuple(Mount.parse(m) for m in data.get("mounts", ())),
            resource_group=data.get("resource_group", "default"),
            name=data.get("name"),
            bootstrap=data.get("bootstrap"),
            command=data.get("command"),
            max_lifetime=data.get("max_lifetime"),
            retries=int(data.get("retries") or 0),
            env=stored_env(data.get("env")),
            workdir=data.get("workdir") or None,
            apps=parse_apps(data.get("apps")),
            priority=int(data.get("priority") or 0),
        )
