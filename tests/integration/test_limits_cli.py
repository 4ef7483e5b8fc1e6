"""``jupyter cluster limits`` (issue 26 item 1) with a local engine: the caller's own
limits from the configuration, an entry changed at run time (which wins over the
configured one and is recorded in the audit log, front end ``cli``), and dropped."""

from __future__ import annotations

import getpass
import os

from .support import Workspace

CONFIG = """
c.ClusterApp.resource_policies = {
    "default": {"sessions": 3},
    "users": {"%s": {"max_cpu": 2}},
    "groups": {"gpu-team": {"max_gpu": 2}},
}
"""


def test_limits_are_shown_changed_audited_and_dropped(ws: Workspace) -> None:
    me = os.environ.get("JUPYTERHUB_USER") or os.environ.get("USER") or getpass.getuser()
    ws.write_config(CONFIG % me)
    mine = ws.json("limits")
    assert mine["user"] == me and mine["source"] == f"user {me}"
    assert mine["limits"]["max_cpu"] == 2 and mine["limits"]["sessions"] == 3
    assert mine["held"] == {"sessions": 0, "cpu": 0, "mem": 0, "gpu": 0}
    table = ws.ok_cli("limits").stdout
    assert f"limits of {me} (from: user {me})" in table and "max_cpu" in table

    entry = ws.json("limits", "set", "--user", me, "max_cpu=4", "mem=64g")
    assert entry["changed"] == {"max_cpu": 4, "mem": "64g"}
    assert entry["configured"] == {"max_cpu": 2} and entry["effective"]["max_cpu"] == 4
    entry = ws.json("limits", "set", "--user", me, "mem=")  # KEY= drops one key
    assert entry["changed"] == {"max_cpu": 4}
    assert ws.json("limits")["limits"]["max_cpu"] == 4
    group = ws.json("limits", "show", "--group", "gpu-team")
    assert group["effective"]["max_gpu"] == 2 and group["changed"] is None

    bad = ws.cli("limits", "set", "--user", me, "max_cpu=lots")
    assert bad.returncode == 2 and "max_cpu" in bad.stderr, bad
    bad = ws.cli("limits", "set", "--user", me, "colour=blue")
    assert bad.returncode == 2 and "KEY=VALUE" in bad.stderr, bad

    ws.ok_cli("limits", "rm", "--user", me)
    assert ws.json("limits")["limits"]["max_cpu"] == 2
    assert ws.cli("limits", "rm", "--user", me).returncode == 2  # nothing left to drop

    records = [r for r in ws.json("audit") if r["action"].startswith("policy")]
    assert [(r["action"], r["front_end"], r["target_owner"]) for r in records] == [
        ("policy_set", "cli", me),
        ("policy_set", "cli", me),
        ("policy_remove", "cli", me),
    ]
