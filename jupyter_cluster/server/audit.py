"""What the server writes to the audit log, and when: one record per request that
changes or reaches into a session or a data folder, or changes a resource policy.

:func:`record` runs as each REST request finishes (``ClusterHandler.on_finish``):
a successful request of a handler and method in :data:`ACTIONS` becomes an
:class:`~jupyter_cluster.core.audit.AuditEvent` whose actor is the client's user,
front end ``rest``, and session the one in the reply (or the path's). Writing is
handed to a thread: a busy store never holds up the event loop. Records older than
``ClusterApp.audit_max_age_days`` are forgotten as new ones come. The idle
clean-up records the sessions it ends with :func:`ended_by_server`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from ..core.audit import AuditEvent, launch_details, session_event
from ..engine.store.audit_log import AuditLog

log = logging.getLogger(__name__)

#: handler class name -> HTTP method -> action (see core.audit.ACTIONS).
ACTIONS = {
    "SessionsHandler": {"POST": "launch"},
    "SessionHandler": {"DELETE": "terminate"},
    "TerminalsHandler": {"POST": "terminal"},
    "AccessHandler": {"GET": "key_access"},
    "FoldersHandler": {"POST": "folder_create"},
    "FolderHandler": {"DELETE": "folder_remove", "PATCH": "folder_rename"},
    "LimitEntryHandler": {"PUT": "policy_set", "DELETE": "policy_remove"},
}
_LOG_SETTING = "jupyter_cluster_audit_log"
_pending: set[asyncio.Future[Any]] = set()


def audit_log(service: Any) -> AuditLog | None:
    """The service's audit log (in its engine's store), opened once; None for a
    server whose engine is the shared service's (which keeps the log itself)."""
    found: AuditLog | None = getattr(service, "_audit_log", None)
    tx = getattr(service.engine.store, "tx", None)
    if found is None and tx is not None:
        found = AuditLog(tx)
        service._audit_log = found
    return found


def event_of(handler: Any) -> AuditEvent | None:
    """The record of the request ``handler`` just finished, or None when it is not
    audited (a read, a failure)."""
    action = ACTIONS.get(type(handler).__name__, {}).get(handler.request.method)
    if action is None or not 200 <= handler.get_status() < 300:
        return None
    replied = getattr(handler, "replied", None)
    data: dict[str, Any] = replied if isinstance(replied, dict) else {}
    kwargs = handler.path_kwargs or {}
    # the session the handler resolved (SessionScope.session), or the one launched
    session = getattr(handler, "audit_session", None)
    session_id, name, target = None, None, handler.owner  # a folder is the actor's own
    if session is not None:
        session_id, name, target = session.id, session.name, session.owner
    details: dict[str, Any] = {}
    if action == "launch":
        details = launch_details(data)
        session_id, name, target = data.get("id"), data.get("name"), data.get("owner")
    elif action == "terminate":
        details = {"reason": handler.get_argument("reason", "") or "requested"}
    elif action == "terminal":
        details = {"host": kwargs.get("host")}
    elif action.startswith("folder"):
        details = {"folder": kwargs.get("name") or data.get("name")}
        if action == "folder_rename":  # the old name is the path's, the new the reply's
            details["to"] = data.get("name")
    elif action.startswith("policy"):  # an admin's change of a user's or group's limits
        details = dict(getattr(handler, "audit_details", None) or {})
        target = kwargs.get("name") if kwargs.get("kind") == "users" else None
    return AuditEvent(
        at=time.time(),
        actor=handler.owner,
        front_end="rest",
        action=action,
        session_id=session_id,
        session_name=name,
        target_owner=target,
        details=details,
    )


def record(handler: Any) -> None:
    """Write the record of the finished request ``handler``, if it is audited."""
    try:
        event = event_of(handler)
        if event is not None:
            write(handler.service, event)
    except Exception:  # the request has been answered: never fail it now
        log.exception("could not write the audit log")


def ended_by_server(service: Any, session: Any, reason: str) -> None:
    """Record that the server itself ended ``session`` (actor ``server``: e.g. the
    idle clean-up), with ``reason``."""
    event = session_event("server", "server", "terminate", session, {"reason": reason})
    try:
        write(service, event)
    except Exception:
        log.exception("could not write the audit log")


def write(service: Any, event: AuditEvent) -> None:
    """Hand ``event`` to a thread that appends it to the service's audit log,
    forgetting records past ``ClusterApp.audit_max_age_days``."""
    days = float(getattr(service.host, "audit_max_age_days", 0.0) or 0.0)
    target = audit_log(service)
    if target is None:
        return
    task = asyncio.ensure_future(asyncio.to_thread(target.append, event, days * 86400))
    _pending.add(task)
    task.add_done_callback(_written)


def _written(task: asyncio.Future[Any]) -> None:
    _pending.discard(task)
    if not task.cancelled() and task.exception() is not None:
        log.error("could not write the audit log: %s", task.exception())


async def flushed() -> None:
    """Wait until every record handed to a thread is written (server stop, tests)."""
    while _pending:
        await asyncio.gather(*list(_pending), return_exceptions=True)
