"""Per-owner limits: how many sessions, and how much CPU, memory and GPU in all, one
owner may hold at once.

The store checks :meth:`Quota.refusal` inside the same write transaction that
inserts a session, so concurrent launches from any front end (REST, kernels
started through ``/api/kernels``, the CLI, the notebook API) are all counted and
cannot overshoot. Sessions count while they wait or hold resources
(:data:`~jupyter_cluster.core.state.LIVE`).
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

    @property
    def unlimited(self) -> bool:
        """Whether nothing is limited (then nothing needs counting)."""
        return not (self.sessions or self.cpu or self.mem or self.gpu)

    def refusal(self, held: Iterable[Session], new: Session) -> str | None:
        """Why ``new`` may not be added to the owner's live sessions ``held``, or None."""
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
