"""``jupyter cluster usage``: allocated CPU-, memory- and GPU-hours per user, and
the CPU time (seconds) their sessions' containers measurably used.

Reads the sessions the engine lists (ended ones included, as long as its history
keeps them) and prints :func:`jupyter_cluster.core.usage.report`: a table per user
(``--sessions`` adds one per session), ``--csv`` or ``--json``. What counts is in
:mod:`jupyter_cluster.core.usage`. On the shared service of a team the engine lists
only what the server lets this user see (an admin's: everyone's). Called by
:func:`.commands.run`.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import time
from typing import Any

from ..core.usage import parse_period, report
from ..engine.api import Engine
from . import format as cli_format

USER_COLUMNS = (
    "user",
    "sessions",
    "running_hours",
    "cpu_hours",
    "mem_gib_hours",
    "gpu_hours",
    "cpu_seconds_used",
)
SESSION_COLUMNS = ("id", "name", "owner", "status", "size", *USER_COLUMNS[1:])


async def usage(engine: Engine[Any], args: argparse.Namespace) -> int:
    """Print the usage in the period ``--since``/``--until`` (``--user``'s only)."""
    since, until = parse_period(args.since, args.until, ("--since", "--until"))
    sessions = await engine.list(include_ended=True)
    if args.user:
        sessions = [s for s in sessions if s.owner == args.user]
    data = report(sessions, time.time(), since, until)
    rows: list[dict[str, Any]] = data["sessions" if args.sessions else "users"]  # type: ignore[assignment]
    columns = SESSION_COLUMNS if args.sessions else USER_COLUMNS
    if args.json:
        print(json.dumps(data, indent=2))
    elif args.csv:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([[row[c] for c in columns] for row in rows])
        print(out.getvalue(), end="")
    elif not rows:
        print("no usage in this period")
    else:
        cells = [[_cell(row[c]) for c in columns] for row in rows]
        print(cli_format.table([c.upper() for c in columns], cells))
    return 0


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value or "-")
