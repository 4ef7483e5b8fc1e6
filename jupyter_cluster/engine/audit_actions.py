"""The local engine's audit records of what front ends without a server did.

A base of :class:`~jupyter_cluster.engine.manager.ClusterManager`: the CLI (and any
front end working on a local engine without a server) records its launches,
terminations, commands run in containers and folder changes here, in the store's
append-only audit log, as the server records REST requests
(:mod:`jupyter_cluster.server.audit`). A record that cannot be written is logged,
never raised: the action itself has happened.
"""

from __future__ import annotations

import logging
from typing import Any

from ..core.audit import AuditEvent
from .store.audit_log import AuditLog

log = logging.getLogger(__name__)


class AuditActions:
    """``record_action`` of the Engine protocol, on the engine's store."""

    store: Any
    _audit_log: AuditLog | None = None

    def record_action(self, event: AuditEvent) -> None:
        """Append ``event`` to the audit log (see the module docstring)."""
        try:
            if self._audit_log is None:
                self._audit_log = AuditLog(self.store.tx)
            self._audit_log.append(event)
        except Exception:  # the action has happened: never fail it now
            log.exception("could not write the audit log")
