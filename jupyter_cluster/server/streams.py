"""Live streams a server serves (followed logs, stats), counted per user and capped.

Used by the log and stats handlers. Each stream holds a connection of the agent's
Docker client for as long as it lasts, and launches need those connections too:
without a cap, one user's open streams could starve everyone's launches. A stream
over a cap is refused (HTTP 429) with what to do.
"""

from __future__ import annotations

from collections import Counter

from ..errors import TooMany


class StreamSlots:
    """How many live streams each user holds, within ``per_user`` and ``total``
    (0: no limit)."""

    def __init__(self, per_user: int, total: int) -> None:
        self.per_user, self.total = per_user, total
        self.held: Counter[str] = Counter()

    @property
    def active(self) -> int:
        """Streams being served now."""
        return sum(self.held.values())

    def take(self, user: str) -> None:
        """Count one more stream of ``user``; TooMany (and nothing counted) over a cap."""
        if self.per_user and self.held[user] >= self.per_user:
            raise TooMany(
                f"{user} has {self.held[user]} live log or stats streams open, the most "
                "one user may (ClusterApp.max_streams_per_user): close some (other "
                "browser tabs, `logs --follow` in other terminals) and retry"
            )
        if self.total and self.active >= self.total:
            raise TooMany(
                f"this server serves {self.active} live log or stats streams, the most it "
                "may (ClusterApp.max_streams): retry once some have ended"
            )
        self.held[user] += 1

    def release(self, user: str) -> None:
        """A stream of ``user`` has ended."""
        self.held[user] -= 1
        if self.held[user] <= 0:
            del self.held[user]
