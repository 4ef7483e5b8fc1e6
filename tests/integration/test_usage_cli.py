"""``jupyter cluster usage`` (issue 26 item 5): allocated hours from the engine's
history, as a table, CSV and JSON, with a period and a user; and the CPU time
sessions' containers measurably used, read from Docker before their removal."""

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
        "USER", "SESSIONS", "RUNNING_HOURS", "CPU_HOURS", "MEM_GIB_HOURS", "GPU_HOURS",
        "CPU_SECONDS_USED",
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


#: Burns 2 s of CPU (process time, whatever the container's CPU limit), then ends.
BURN = "import time\nwhile time.process_time() < 2:\n    pass\n"


def test_measured_cpu_time_is_kept_after_the_session_ended(ws: Workspace) -> None:
    busy = ws.launch("--cpu", "1", "--mem", "256m", "--name", "busy")
    idle = ws.launch(*SMALL_FLAGS, "--name", "idle")
    done = ws.exec(busy["id"], "main1", "python3", "-c", BURN)
    assert done.returncode == 0, str(done)
    ws.ok_cli("rm", busy["id"], idle["id"])

    rows = {
        r["name"]: r
        for r in csv.DictReader(io.StringIO(ws.ok_cli("usage", "--sessions", "--csv").stdout))
    }
    assert 1.5 <= float(rows["busy"]["cpu_seconds_used"]) < 60, rows["busy"]
    # an idle session's containers used only what starting them took (about 0.1 s)
    assert 0.0 <= float(rows["idle"]["cpu_seconds_used"]) < 1.0, rows["idle"]
    assert rows["busy"]["status"] == "TERMINATED"
    [user] = csv.DictReader(io.StringIO(ws.ok_cli("usage", "--csv").stdout))
    total = float(rows["busy"]["cpu_seconds_used"]) + float(rows["idle"]["cpu_seconds_used"])
    assert abs(float(user["cpu_seconds_used"]) - total) < 0.01, user
    shown = ws.show(busy["id"])  # kept with each container
    assert shown["containers"][0]["cpu_seconds"] >= 1.0, shown["containers"]
