"""What users may launch: the limits, choices and defaults of the launch form.

:class:`LaunchPolicy` is built by :class:`~jupyter_cluster.config.LaunchSettings`
(the ``c.ClusterApp.*`` limits) from the manager's agents, images and folders; the
server's REST API and the notebook's launch form both describe and check launches
against it (:mod:`.launch_options`). Pure: standard library and ``errors`` only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .models import ClusterMode
from .units import format_size, parse_size

MAX_BOOTSTRAP = 64 * 1024
#: What a launch form shows when the configuration gives no default.
BUILTIN_DEFAULTS: dict[str, Any] = {
    "size": 1,
    "mode": ClusterMode.SINGLE_NODE.value,
    "cpu": 1.0,
    "mem": "1g",
    "shm": "64m",
    "gpu": 0,
    "mounts": [],
    "resource_group": "default",
    "name": None,
    "bootstrap": None,
    "command": None,
    "max_lifetime": None,
    "retries": 0,
    "env": None,
    "apps": None,
    "start_kernel": False,
}
FIELDS = ("image", *BUILTIN_DEFAULTS)


@dataclass(frozen=True)
class LaunchPolicy:
    """What users of this server may ask for; built by the extension from its config."""

    images: tuple[str, ...]
    max_size: int
    max_cpu: float
    max_mem: int
    max_shm: int
    max_gpu: int
    resource_groups: tuple[str, ...]
    folders: tuple[str, ...] = ()
    max_sessions_per_user: int = 0  # 0: no limit
    defaults: Mapping[str, Any] = field(default_factory=dict)
    #: Reserved variable names users may set here (``ClusterManager.allowed_env_names``).
    env_allowed: tuple[str, ...] = ()

    def default(self, name: str) -> Any:
        """The form's default of field ``name``."""
        if name in self.defaults:
            return self.defaults[name]
        if name == "image":
            return self.images[0] if self.images else ""
        if name == "resource_group" and self.resource_groups:
            rg = BUILTIN_DEFAULTS["resource_group"]
            return rg if rg in self.resource_groups else self.resource_groups[0]
        # Built-in resource defaults never exceed the configured limits.
        if name == "cpu":
            return min(BUILTIN_DEFAULTS["cpu"], self.max_cpu)
        if name in ("mem", "shm"):
            limit = self.max_mem if name == "mem" else self.max_shm
            return format_size(min(parse_size(BUILTIN_DEFAULTS[name]), limit))
        return BUILTIN_DEFAULTS[name]


def same_image(a: str, b: str) -> bool:
    """Whether two image references name the same image (``x`` is ``x:latest``)."""

    def norm(ref: str) -> str:
        ref = ref.strip()
        last = ref.rsplit("/", 1)[-1]
        return ref if ":" in last or "@" in last else ref + ":latest"

    return norm(a) == norm(b)


def ordered_images(allowed: tuple[str, ...] | list[str], default: str) -> tuple[str, ...]:
    """The images users may launch, the default first (only the default when none)."""
    images = list(allowed) or [default]
    first = [i for i in images if same_image(i, default)]
    return tuple(first + [i for i in images if not same_image(i, default)])
