"""What the CLI did, for the audit log: launches, terminations, commands run in
containers and data folder changes (see ``Engine.record_action``).

Called by :mod:`.commands` and :mod:`.container_commands` once an action is done
(an ``exec`` as it starts). On the shared service's client nothing is kept here:
the service records the requests it serves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..config import local_owner
from ..core.audit import fingerprint, launch_details, session_event
from ..core.models import Session
from ..engine.api import Engine


def record(
    engine: Engine[Any],
    action: str,
    session: Session | None = None,
    details: Mapping[str, Any] | None = None,
) -> None:
    """Record that this CLI's user did ``action`` (on ``session``)."""
    engine.record_action(session_event(local_owner(), "cli", action, session, details))


def record_launch(engine: Engine[Any], session: Session) -> None:
    """A launch: its shape, image and mounts, as the server records one."""
    record(engine, "launch", session, launch_details(session.to_dict()))


def record_exec(
    engine: Engine[Any], session: Session, hosts: Sequence[str], cmd: list[str]
) -> None:
    """A command run in ``hosts`` of ``session``: which, and a fingerprint of the
    command (its text may hold a secret)."""
    details = {"hosts": list(hosts), "command": fingerprint(" ".join(cmd))}
    record(engine, "exec", session, details)
