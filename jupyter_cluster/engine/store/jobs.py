"""A batch job's state in the store: each change a check-and-write in one transaction.

The job runner (:mod:`..batch`) of whichever process watches a job (a detached CLI
driver, a server, the shared service; more than one may at once) changes the
:class:`~jupyter_cluster.core.batch.Job` in the session's record only through
:func:`change_job`, so that two watchers never both start the same try or both
record its exit: the second one's change finds the job moved on and is refused.
The lifetime watch (:mod:`..lifetime`) sets its warning with :func:`set_reason`.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ...core.batch import Job
from ...core.models import Session
from .sessions import Store


def change_job(store: Store, session_id: str, change: Callable[[Job], Job | None]) -> Job | None:
    """Apply ``change`` to the session's job and write the result, in one transaction;
    ``change`` returns None to leave it as it is (then None is returned). Raises
    NotFound for an unknown session."""
    with store.tx() as db:
        session = store._get(db, session_id)
        new = change(session.job or Job())
        if new is None:
            return None
        store._write(db, session.with_(job=new, updated_at=time.time()))
    return new


def set_reason(
    store: Store, session_id: str, reason: str, only_if: Callable[[Session], bool]
) -> bool:
    """Set the status reason of a session without changing its status, if
    ``only_if(session)`` holds (checked in the same transaction); whether it did."""
    with store.tx() as db:
        session = store._get(db, session_id)
        if not only_if(session) or session.status_reason == reason:
            return False
        store._write(db, session.with_(status_reason=reason, updated_at=time.time()))
    return True
