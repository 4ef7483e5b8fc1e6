"""Whether a uid for session processes is free of every host account.

Session processes run as ``work``, whose uid is ``ContainerHardening.work_uid``.
Without user-namespace remapping that is a uid of the host too, and a host account
with the same uid (or whose subordinate ids, which its rootless containers use,
cover it) can read and write those processes through ``/proc/<pid>/root`` and
``environ``. :func:`uid_holder` says who holds a uid; the hardening settings call it
at the engine's start with what the host's account databases say (the IO is
theirs). Pure: standard library only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

#: The uid ``work`` has in the default image, and in single-user mode.
DEFAULT_WORK_UID = 1000
#: The uid the shared service gives ``work``: above every login range and above
#: the subordinate ids useradd hands out by default (100000 to 600100000), checked
#: free at the service's start.
TEAM_WORK_UID = 700_000_000


@dataclass(frozen=True)
class SubordinateRange:
    """One line of ``/etc/subuid`` or ``/etc/subgid``: ``owner:start:count``."""

    owner: str
    start: int
    count: int

    def holds(self, uid: int) -> bool:
        return self.start <= uid < self.start + self.count


def parse_subordinate(text: str) -> list[SubordinateRange]:
    """The ranges of a subordinate id file; malformed lines are skipped."""
    ranges = []
    for line in text.splitlines():
        parts = line.strip().split(":")
        if len(parts) != 3 or line.lstrip().startswith("#"):
            continue
        try:
            ranges.append(SubordinateRange(parts[0], int(parts[1]), int(parts[2])))
        except ValueError:
            continue
    return ranges


def uid_holder(
    uid: int,
    accounts: Mapping[int, str],
    subordinate: Iterable[tuple[str, SubordinateRange]] = (),
) -> str | None:
    """Who on the host holds ``uid``: an account (``accounts``: uid -> name, users and
    groups alike), or a range of ``subordinate`` ((file, range) pairs); None: nobody."""
    if uid in accounts:
        return f"the host account {accounts[uid]!r}"
    for where, taken in subordinate:
        if taken.holds(uid):
            return (
                f"the subordinate ids of {taken.owner!r} ({where}: "
                f"{taken.start}-{taken.start + taken.count - 1})"
            )
    return None


def check_work_uid(
    uid: int,
    accounts: Mapping[int, str],
    subordinate: Iterable[tuple[str, SubordinateRange]] = (),
) -> None:
    """Raise ValueError saying what to do when ``uid`` is not free (see :func:`uid_holder`)."""
    if not 1 <= uid < 2**31:
        raise ValueError(f"ContainerHardening.work_uid: {uid} is not between 1 and {2**31 - 1}")
    holder = uid_holder(uid, accounts, subordinate)
    if holder is not None:
        raise ValueError(
            f"ContainerHardening.work_uid {uid} belongs to {holder}: that account could read "
            "and change every session's processes and files through /proc; set work_uid "
            "to a uid no host account, group or subordinate range uses"
        )
