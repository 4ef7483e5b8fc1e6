"""Resource policies: what one user may hold and launch, per user, per group, by default.

A :class:`ResourcePolicy` bounds a user's sessions (how many at once, the CPU,
memory and GPUs they hold together), each session (size, CPU, memory, shm, GPUs
per container, lifetime, idle time), where and what they launch (resource groups,
images) and the priority range of their launches. The site configures them
(``c.ClusterApp.resource_policies``: a ``default`` and per-``users`` and
per-``groups`` entries, each a few keys over the default); admins change entries
at run time (kept in the store, :mod:`jupyter_cluster.engine.store.policy_overrides`).

:func:`resolve` picks the policy of (owner, Hub groups):

1. the owner's own entry, if there is one (it wins outright, stricter or not);
2. else the **most generous** of the entries of the owner's groups
   (:func:`most_generous`: for every key the value that allows most);
3. else the default.

The default itself is built from the site's global settings
(``ClusterApp.max_cpu`` … ``max_sessions_per_user``, ``ClusterManager.max_*_per_owner``,
``max_session_lifetime``), so a configuration without policies behaves as before.
:class:`~jupyter_cluster.config.LaunchSettings` resolves them; the launch gate
applies them. Pure: standard library and ``errors`` only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, NamedTuple

from ..errors import InvalidRequest
from .models import Session
from .quota import Quota, image_allowed
from .state import LIVE
from .time_limits import format_duration, parse_lifetime
from .units import format_size, parse_size

#: Keys where 0 means "no limit" (so 0 is the most generous value).
ZERO_UNLIMITED = ("sessions", "cpu", "mem", "gpu", "max_lifetime", "idle_timeout")
#: Keys where an empty list means "all the site offers".
LISTS = ("resource_groups", "images")
SIZES = ("mem", "max_mem", "max_shm")
DURATIONS = ("max_lifetime", "idle_timeout")
HELP = {
    "sessions": "sessions at once, pending or running (0: no limit)",
    "cpu": "CPUs held in all sessions together (0: no limit)",
    "mem": "memory held in all sessions together, e.g. 64g (0: no limit)",
    "gpu": "GPUs held in all sessions together (0: no limit)",
    "max_size": "containers per session",
    "max_cpu": "CPUs per container",
    "max_mem": "memory per container, e.g. 16g",
    "max_shm": "shared memory per container, e.g. 4g",
    "max_gpu": "GPUs per container",
    "max_lifetime": "longest a session may live, e.g. 8h (0: no limit)",
    "idle_timeout": "end idle kernel sessions after this long, e.g. 1h (0: the server's)",
    "resource_groups": "resource groups a session may use (empty: every group)",
    "images": "images, or prefixes ending in '/' (registries), a session may use (empty: all)",
    "priority": "the priority a launch gets unless it asks for another",
    "max_priority": "the highest priority a launch may ask for",
}


@dataclass(frozen=True)
class ResourcePolicy:
    """The limits of one user (see the module docstring); sizes in bytes, durations
    in seconds."""

    sessions: int = 0
    cpu: float = 0.0
    mem: int = 0
    gpu: int = 0
    max_size: int = 1
    max_cpu: float = 1.0
    max_mem: int = 0
    max_shm: int = 0
    max_gpu: int = 0
    max_lifetime: float = 0.0
    idle_timeout: float = 0.0
    resource_groups: tuple[str, ...] = ()
    images: tuple[str, ...] = ()
    priority: int = 0
    max_priority: int = 0

    def updated(self, changes: Mapping[str, Any], where: str = "") -> ResourcePolicy:
        """This policy with the raw keys ``changes`` (config or REST) over it;
        InvalidRequest naming the first wrong key (prefixed with ``where``)."""
        result = replace(self, **parse_fields(changes, where))
        if result.priority > result.max_priority:
            result = replace(result, max_priority=result.priority)
        return result

    def allows_image(self, image: str) -> bool:
        """Whether ``image`` is one of the policy's images or under one of its prefixes."""
        return not self.images or image_allowed(image, self.images)

    def quota(self) -> Quota:
        """What the store checks in the transaction that inserts a session of this
        user: the totals held and each new session's maxima."""
        return Quota(
            sessions=self.sessions,
            cpu=self.cpu,
            mem=self.mem,
            gpu=self.gpu,
            max_size=self.max_size,
            max_cpu=self.max_cpu,
            max_mem=self.max_mem,
            max_shm=self.max_shm,
            max_gpu=self.max_gpu,
            resource_groups=self.resource_groups,
            images=self.images,
        )

    def check_priority(self, priority: int) -> int:
        """``priority`` if within this policy's range (0 … ``max_priority``), else
        InvalidRequest naming the field."""
        if isinstance(priority, bool) or not isinstance(priority, int):
            raise InvalidRequest("priority: expected a whole number", "priority")
        if not 0 <= priority <= self.max_priority:
            raise InvalidRequest(
                f"priority: your limits allow 0 to {self.max_priority}, got {priority}",
                "priority",
            )
        return priority

    def to_dict(self) -> dict[str, Any]:
        """The REST and ``--json`` shape: sizes as ``16g``, durations as ``2h`` (or 0)."""
        data = asdict(self)
        for key in SIZES:
            data[key] = format_size(data[key]) if data[key] else 0
        for key in DURATIONS:
            data[key] = format_duration(data[key]) if data[key] else 0
        for key in LISTS:
            data[key] = list(data[key])
        return data


KEYS = tuple(f.name for f in fields(ResourcePolicy))


def _whole(key: str, value: Any, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise InvalidRequest(f"{key}: expected a whole number of at least {low}", key)
    return value


def parse_fields(raw: Mapping[str, Any], where: str = "") -> dict[str, Any]:
    """Check and normalize the policy keys of ``raw`` (unknown keys refused);
    InvalidRequest naming the first wrong one."""
    if not isinstance(raw, Mapping):
        raise InvalidRequest(f"{where or 'policy'}: expected an object of limits", "body")
    out: dict[str, Any] = {}
    for key, value in raw.items():
        name = f"{where}{key}"
        if key not in KEYS:
            raise InvalidRequest(f"{name}: unknown limit; the limits are {', '.join(KEYS)}", key)
        try:
            out[key] = _parse(key, value)
        except InvalidRequest as exc:
            raise InvalidRequest(f"{where}{exc}", key) from None
    return out


def _parse(key: str, value: Any) -> Any:
    if key in SIZES:
        if isinstance(value, bool):  # before the 0 check: false == 0 in Python
            raise InvalidRequest(f"{key}: give a size such as 16g", key)
        if value in (0, "0"):
            if key != "mem":
                raise InvalidRequest(f"{key}: give a size such as 16g", key)
            return 0
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise InvalidRequest(f"{key}: give a size such as 16g", key)
        return parse_size(value, key)
    if key in DURATIONS:
        if value is None:  # not "no limit": an admin who sends null may mean "unset"
            raise InvalidRequest(f"{key}: give a duration such as 8h, or 0 for no limit", key)
        return parse_lifetime(value, key) or 0.0
    if key in LISTS:
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise InvalidRequest(f"{key}: expected a list of names", key)
        return tuple(dict.fromkeys(v.strip() for v in value if v.strip()))
    if key in ("cpu", "max_cpu"):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise InvalidRequest(f"{key}: expected a CPU count of at least 0", key)
        if key == "max_cpu" and value <= 0:
            raise InvalidRequest(f"{key}: expected a CPU count above 0", key)
        return float(value)
    if key == "max_size":
        return _whole(key, value, 1)
    return _whole(key, value, 0)


def most_generous(policies: Sequence[ResourcePolicy]) -> ResourcePolicy:
    """The policy allowing, for every key, what the most generous of ``policies``
    allows: no limit if any has none (0, or an empty list), else the largest
    number and the union of the lists; the highest priority and range."""
    if not policies:
        raise ValueError("most_generous needs at least one policy")
    values: dict[str, Any] = {}
    for key in KEYS:
        got = [getattr(p, key) for p in policies]
        if key in ZERO_UNLIMITED:
            values[key] = type(got[0])(0) if any(not v for v in got) else max(got)
        elif key in LISTS:
            values[key] = () if any(not v for v in got) else tuple(sorted(set(_chain(got))))
        else:
            values[key] = max(got)
    return ResourcePolicy(**values)


def _chain(lists: Iterable[Iterable[str]]) -> Iterable[str]:
    for items in lists:
        yield from items


class Resolved(NamedTuple):
    """The policy that applies to a user and where it comes from
    (``user alice``, ``groups gpu-team, ml`` or ``default``)."""

    policy: ResourcePolicy
    source: str


def resolve(
    owner: str,
    groups: Iterable[str],
    default: ResourcePolicy,
    users: Mapping[str, Mapping[str, Any]],
    group_entries: Mapping[str, Mapping[str, Any]],
) -> Resolved:
    """The policy of ``owner`` with Hub ``groups`` (the rule is in the module
    docstring); entries are raw keys over ``default``."""
    if owner in users:
        return Resolved(default.updated(users[owner]), f"user {owner}")
    mine = sorted({g for g in groups if g in group_entries})
    if mine:
        policy = most_generous([default.updated(group_entries[g]) for g in mine])
        return Resolved(policy, "groups " + ", ".join(mine))
    return Resolved(default, "default")


def check_table(table: Any) -> None:
    """Check ``ClusterApp.resource_policies`` (``default``, ``users``, ``groups``);
    InvalidRequest saying which entry and key is wrong."""
    if not isinstance(table, Mapping):
        raise InvalidRequest("expected {'default': {...}, 'users': {...}, 'groups': {...}}")
    for section in table:
        if section not in ("default", "users", "groups"):
            raise InvalidRequest(f"{section}: unknown section; use default, users, groups")
    base = ResourcePolicy(max_mem=1, max_shm=1)
    base.updated(table.get("default") or {}, "default: ")
    for section in ("users", "groups"):
        entries = table.get(section) or {}
        if not isinstance(entries, Mapping):
            raise InvalidRequest(f"{section}: expected an object of names and limits")
        for name, entry in entries.items():
            base.updated(entry, f"{section}.{name}: ")


def held_by(sessions: Iterable[Session], owner: str) -> dict[str, Any]:
    """What ``owner``'s live sessions hold together (sessions, CPU, memory bytes,
    GPUs), as ``GET limits`` and ``jupyter cluster limits`` show it."""
    mine = [s for s in sessions if s.owner == owner and s.status in LIVE]
    totals = [s.spec.resources.times(s.spec.size) for s in mine]
    return {
        "sessions": len(mine),
        "cpu": round(sum(t.cpu for t in totals), 3),
        "mem": sum(t.mem for t in totals),
        "gpu": sum(t.gpu for t in totals),
    }
