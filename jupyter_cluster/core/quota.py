"""Per-owner limits: how many sessions, and how much CPU, memory and GPU in all, one
owner may hold at once.

The store checks :meth:`Quota.refusal` inside the same write transaction that
inserts a session, so concurrent launches from any front end (REST, kernels
started through ``/api/kernels``, the CLI, the notebook API) are all counted and
cannot overshoot. Sessions count while they wait or hold resources
(:data:`~jupyter_cluster.core.state.LIVE`). A quota built from a user's resource
policy (:mod:`.resource_policies`) also bounds each new session (size, per-container
CPU, memory, shm and GPUs, resource group, image), so a launch that bypassed the
launch form's checks (a kernel's) meets the same limits.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .models import Session
from .units import format_size


@dataclass(frozen=True)
class Quota:
    """The limits of one owner; 0 means no limit."""

    sessions: int = 0
    cpu: float = 0.0
    mem: int = 0
    gpu: int = 0
    #: Per-session maxima (0 / empty: not checked here).
    max_size: int = 0
    max_cpu: float = 0.0
    max_mem: int = 0
    max_shm: int = 0
    max_gpu: int = -1  # -1: not checked (0 is a real limit: no GPU)
    resource_groups: tuple[str, ...] = ()
    images: tuple[str, ...] = ()

    @property
    def unlimited(self) -> bool:
        """Whether nothing is limited (then nothing needs counting or checking)."""
        return not (
            self.sessions
            or self.cpu
            or self.mem
            or self.gpu
            or self.max_size
            or self.max_cpu
            or self.max_mem
            or self.max_shm
            or self.max_gpu >= 0
            or self.resource_groups
            or self.images
        )

    def refusal(self, held: Iterable[Session], new: Session) -> str | None:
        """Why ``new`` may not be added to the owner's live sessions ``held``, or None."""
        too_big = self.session_refusal(new)
        if too_big:
            return too_big
        held = list(held)
        if self.sessions and len(held) + 1 > self.sessions:
            return (
                f"{new.owner or 'this user'} already has {len(held)} active cluster session(s) "
                f"and the limit is {self.sessions}; terminate one first"
            )
        sessions = [*held, new]
        totals = [s.spec.resources.times(s.spec.size) for s in sessions]
        checks = (
            ("CPUs", self.cpu, sum(t.cpu for t in totals), f"{self.cpu:g}"),
            ("memory", self.mem, sum(t.mem for t in totals), format_size(self.mem)),
            ("GPUs", self.gpu, sum(t.gpu for t in totals), str(self.gpu)),
        )
        for what, limit, total, shown in checks:
            if limit and total > limit + 1e-9:
                return (
                    f"this session would bring {new.owner or 'this user'}'s {what} in active "
                    f"cluster sessions over the limit of {shown}; terminate a session or ask "
                    "for less"
                )
        return None

    def session_refusal(self, new: Session) -> str | None:
        """Why ``new`` itself is beyond the per-session maxima, or None."""
        spec, res = new.spec, new.spec.resources
        checks = (
            ("containers", self.max_size, spec.size, str(self.max_size)),
            ("CPUs per container", self.max_cpu, res.cpu, f"{self.max_cpu:g}"),
            ("memory per container", self.max_mem, res.mem, format_size(self.max_mem)),
            ("shared memory per container", self.max_shm, res.shm, format_size(self.max_shm)),
        )
        for what, limit, value, shown in checks:
            if limit and value > limit + 1e-9:
                return f"your limits allow at most {shown} {what}; ask for less"
        if self.max_gpu >= 0 and res.gpu > self.max_gpu:
            return f"your limits allow at most {self.max_gpu} GPUs per container; ask for less"
        if self.resource_groups and spec.resource_group not in self.resource_groups:
            return (
                f"your limits do not allow resource group {spec.resource_group!r}; use one of "
                + ", ".join(self.resource_groups)
            )
        if self.images and not image_allowed(spec.image, self.images):
            return f"your limits do not allow image {spec.image!r}"
        return None


def image_allowed(image: str, allowed: tuple[str, ...]) -> bool:
    """Whether ``image`` is one of ``allowed`` or under one of its prefixes ending in '/'."""

    def norm(ref: str) -> str:
        last = ref.strip().rsplit("/", 1)[-1]
        return ref.strip() if ":" in last or "@" in last else ref.strip() + ":latest"

    return any(image.startswith(a) if a.endswith("/") else norm(image) == norm(a) for a in allowed)
