"""``jupyter cluster usage`` (issue 26 item 5): allocated hours from the engine's
history, as a table, CSV and JSON, with a period and a user."""

from __future__ import annotations

import csv
import io
import time

from tests.support.constants import SMALL_FLAGS

from .support import Workspace


def test_usage_counts_a_sessions_running_time_after_it_ended(ws: Workspace) -> None:
    assert ws.ok_cli("usage").stdout.strip() == "no usage in this period"
    session = ws.launch("--size", "2", *SMALL_FLAGS, "--name", "counted")
    time.sleep(2)
    ws.ok_cli("rm", session["id"])

    data = ws.json("usage", "--sessions")
    [row] = data["sessions"]
    assert row["id"] == session["id"] and row["status"] == "TERMINATED"
    assert 2 / 3600 <= row["running_hours"] < 120 / 3600, row
    assert abs(row["cpu_hours"] - row["running_hours"] * 2 * 0.25) < 2e-4, row
    [user] = data["users"]
    owner = row["owner"]
    assert user["user"] == owner and user["sessions"] == 1

    table = ws.ok_cli("usage").stdout.splitlines()
    assert table[0].split() == [
        "USER", "SESSIONS", "RUNNING_HOURS", "CPU_HOURS", "MEM_GIB_HOURS", "GPU_HOURS"
    ]  # fmt: skip
    assert table[1].split()[:2] == [owner or "-", "1"]
    rows = list(csv.DictReader(io.StringIO(ws.ok_cli("usage", "--sessions", "--csv").stdout)))
    assert [r["name"] for r in rows] == ["counted"]
    assert float(rows[0]["gpu_hours"]) == 0.0

    later = ws.ok_cli("usage", "--since", "2999-01-01").stdout.strip()
    assert later == "no usage in this period"
    assert ws.json("usage", "--user", "nobody-here")["users"] == []
    bad = ws.cli("usage", "--since", "yesterday-ish")
    assert bad.returncode == 2 and "--since" in bad.stderr, bad
