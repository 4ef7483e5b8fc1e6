"""What a launch would meet now, told without making anything (a dry run).

Made by the engine's :meth:`~jupyter_cluster.engine.manager.ClusterManager.check`
(``jupyter cluster launch --dry-run``, ``POST sessions?dry_run=1``, and
``kernelspec install``'s warning): a launch refused for good raises there, as it
would at submit; one that would be accepted gets a :class:`LaunchCheck`, which says
whether it would start at once and on which agents, or why it would wait. The
service sends it as JSON (:meth:`LaunchCheck.to_dict`), a team's client reads it
back (:meth:`LaunchCheck.from_dict`), and the CLI prints :meth:`LaunchCheck.describe`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from . import naming


@dataclass(frozen=True)
class LaunchCheck:
    """Whether a launch would start now (``placement``: each host's agent, in rank
    order) or wait (``reason``: the queue's words, as ``show`` would give them)."""

    placement: tuple[tuple[str, str], ...] = ()
    reason: str = ""

    @property
    def starts_now(self) -> bool:
        """Whether it would be placed at once (else it would be PENDING)."""
        return bool(self.placement)

    @classmethod
    def placed(cls, agents: Sequence[str]) -> LaunchCheck:
        """A launch the scheduler would place now: ``agents[i]`` holds the i-th host."""
        return cls(placement=tuple(zip(naming.hosts(len(agents)), agents, strict=True)))

    @classmethod
    def waiting(cls, reason: str) -> LaunchCheck:
        """A launch that would be accepted and wait, for ``reason``."""
        return cls(reason=reason)

    def to_dict(self) -> dict[str, Any]:
        """The REST answer of ``POST sessions?dry_run=1``."""
        return {
            "starts_now": self.starts_now,
            "placement": dict(self.placement),
            "reason": self.reason,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LaunchCheck:
        """Read :meth:`to_dict`'s answer back (a team's client of the service)."""
        placement = data.get("placement") or {}
        if not isinstance(placement, Mapping):
            raise ValueError("placement: expected an object of host to agent")
        return cls(
            placement=tuple((str(h), str(a)) for h, a in placement.items()),
            reason=str(data.get("reason") or ""),
        )

    def describe(self) -> str:
        """What the CLI prints: where each container would go, or why it would wait."""
        if not self.starts_now:
            return f"would wait (PENDING): {self.reason}"
        by_agent: dict[str, list[str]] = {}
        for host, agent in self.placement:
            by_agent.setdefault(agent, []).append(host)
        where = "; ".join(f"{agent}: {', '.join(hosts)}" for agent, hosts in by_agent.items())
        return f"would start now on {where}"
