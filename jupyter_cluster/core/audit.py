"""The audit log's records: who did what to which session, from which front end.

An :class:`AuditEvent` is one line of the append-only audit log (kept in the
engine's store by :class:`~jupyter_cluster.engine.store.audit_log.AuditLog`,
written by the server for each request that changes or reaches into a session:
:mod:`jupyter_cluster.server.audit`, and by a local engine for what the CLI does
without a server: ``Engine.record_action``). Its ``details`` never hold a secret: no
environment values, keys or tokens, and no command text. A bootstrap or batch
command may carry a password or token in its text, so only its SHA-256 and length
are kept (:func:`fingerprint`): enough to tell whether two launches ran the same
command, nothing to read back.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: Every action recorded, in the order of a session's life.
ACTIONS = (
    "launch",
    "terminate",
    "terminal",
    "exec",
    "key_access",
    "folder_create",
    "folder_remove",
    "folder_rename",
    "policy_set",
    "policy_remove",
)


def fingerprint(text: str | None) -> dict[str, Any] | None:
    """What the log keeps of a text that may hold a secret: its SHA-256 and length."""
    if not text:
        return None
    return {"sha256": hashlib.sha256(text.encode()).hexdigest(), "length": len(text)}


def launch_details(model: Mapping[str, Any]) -> dict[str, Any]:
    """The details of a launch from the session's public shape (REST reply): its
    shape, image and mounts, the names (not values) of its environment variables,
    and fingerprints of its bootstrap and command."""
    return {
        "image": model.get("image"),
        "size": model.get("size"),
        "mode": model.get("mode"),
        "resources": model.get("resources"),
        "mounts": model.get("mounts"),
        "env": sorted(model.get("env") or ()),
        "bootstrap": fingerprint(model.get("bootstrap")),
        "command": fingerprint(model.get("command")),
    }


@dataclass(frozen=True)
class AuditEvent:
    """One record: ``actor`` did ``action`` at ``at`` (epoch s) through ``front_end``
    ("rest", "cli" …) on a session (or folder) of ``target_owner``."""

    at: float
    actor: str
    front_end: str
    action: str
    session_id: str | None = None
    session_name: str | None = None
    target_owner: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    id: int = 0

    @property
    def on_behalf(self) -> bool:
        """Whether the actor acted on another user's session (an admin's action)."""
        return self.target_owner is not None and self.target_owner != self.actor

    def to_dict(self) -> dict[str, Any]:
        """The REST and ``--json`` shape."""
        return {
            "id": self.id,
            "time": self.at,
            "actor": self.actor,
            "front_end": self.front_end,
            "action": self.action,
            "session_id": self.session_id,
            "session_name": self.session_name,
            "target_owner": self.target_owner,
            "on_behalf": self.on_behalf,
            "details": dict(self.details),
        }

    def details_json(self) -> str:
        return json.dumps(dict(self.details), sort_keys=True)


def session_event(
    actor: str,
    front_end: str,
    action: str,
    session: Any = None,
    details: Mapping[str, Any] | None = None,
) -> AuditEvent:
    """The record of ``actor`` doing ``action`` now through ``front_end``, on
    ``session`` (a :class:`~jupyter_cluster.core.models.Session`, or None for a
    folder or policy: then the actor's own)."""
    return AuditEvent(
        at=time.time(),
        actor=actor,
        front_end=front_end,
        action=action,
        session_id=session.id if session is not None else None,
        session_name=session.name if session is not None else None,
        target_owner=session.owner if session is not None else actor,
        details=dict(details or {}),
    )
