"""``jupyter cluster audit``: the audit log, as a table or ``--json``.

With a local engine, read from its store (whose owner is the only one who can
open it); on the shared service of a team, from ``GET cluster/api/audit``, which
only admins may read. What is recorded is in :mod:`jupyter_cluster.core.audit`.
Called by :func:`.commands.run`.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from ..core.audit import ACTIONS
from ..core.usage import parse_time
from ..engine.api import Engine
from ..engine.store.audit_log import AuditLog
from ..errors import InvalidRequest
from . import format as cli_format

COLUMNS = ("TIME", "ACTOR", "FRONT END", "ACTION", "SESSION", "OWNER", "DETAILS")


async def audit(engine: Engine[Any], args: argparse.Namespace) -> int:
    """Print the records matching ``--since``, ``--user``, ``--action`` (newest ``--limit``)."""
    since = parse_time(args.since, "--since")
    if args.action is not None and args.action not in ACTIONS:
        raise InvalidRequest(
            f"--action: one of {', '.join(ACTIONS)}, got {args.action!r}", "action"
        )
    http = getattr(engine, "http", None)
    if http is not None:  # the shared service's
        params = {"since": since, "actor": args.user, "action": args.action, "limit": args.limit}
        records = await http.call("GET", "audit", **{k: v for k, v in params.items() if v})
    else:
        found = AuditLog(engine.store.tx).read(  # type: ignore[attr-defined]
            since, args.user, args.action, args.limit
        )
        records = [e.to_dict() for e in found]
    if args.json:
        print(json.dumps(records, indent=2))
    elif not records:
        print("no audit records")
    else:
        rows = [
            (
                time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(r["time"])),
                r["actor"] or "-",
                r["front_end"],
                r["action"] + (" (admin)" if r["on_behalf"] else ""),
                (r["session_name"] or (r["session_id"] or "")[:8]) or "-",
                r["target_owner"] or "-",
                json.dumps(r["details"], sort_keys=True) if r["details"] else "-",
            )
            for r in records
        ]
        print(cli_format.table(COLUMNS, rows))
    return 0
