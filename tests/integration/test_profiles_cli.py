"""``jupyter cluster profile save|ls|rm`` and ``launch --profile NAME [flags]`` (issue 25
item 4) on the real Docker engine: a saved profile launches its shape, a flag given
overrides it, and the site's profiles from the config file are listed and used."""

from __future__ import annotations

import json

from tests.support.docker import running_hosts

from .support import Workspace


def test_a_saved_profile_launches_with_the_flags_given_on_top(ws: Workspace) -> None:
    site = {"site-one": {"description": "one small", "fields": {"cpu": 0.25, "mem": "256m"}}}
    config = {"ClusterApp": {"launch_profiles": site}}
    (ws.config_dir / "jupyter_cluster_config.json").write_text(json.dumps(config))

    saved = ws.ok_cli(
        "profile", "save", "pair", "--size", "2", "--cpu", "0.25", "--mem", "256m",
        "--env", "FROM=pair", "--description", "two small",
    )  # fmt: skip
    assert saved.stdout.strip() == "saved launch profile pair"
    rows = {r["name"]: r for r in ws.json("profile", "ls")}
    assert rows["pair"]["scope"] == "user" and rows["site-one"]["scope"] == "site"
    assert rows["pair"]["fields"] == {
        "size": 2,
        "cpu": "0.25",
        "mem": "256m",
        "env": {"FROM": "pair"},
    }
    table = ws.ok_cli("profile", "ls").stdout.splitlines()
    assert table[0].split() == ["NAME", "SCOPE", "FIELDS", "DESCRIPTION"]

    session = ws.launch("--profile", "pair", "--mem", "320m", "--name", "by-profile")
    assert (session["name"], session["size"], session["status"]) == ("by-profile", 2, "RUNNING")
    assert session["resources"]["cpu"] == 0.25
    assert session["resources"]["mem"] == 320 * 1024 * 1024  # the flag won
    assert session["env"] == ["FROM"]
    assert running_hosts(session["id"]) == {"main1": True, "sub1": True}
    ws.ok_cli("rm", session["id"])

    one = ws.launch("--profile", "site-one")
    assert (one["size"], one["resources"]["mem"]) == (1, 256 * 1024 * 1024)
    ws.ok_cli("rm", one["id"])

    bad = ws.cli("launch", "--profile", "nope")
    assert bad.returncode == 2 and "no launch profile named 'nope'" in bad.stderr, str(bad)
    assert ws.ok_cli("profile", "rm", "pair").stdout.strip() == "removed launch profile pair"
    gone = ws.cli("profile", "rm", "pair")
    assert gone.returncode == 2 and "no launch profile named 'pair'" in gone.stderr, str(gone)
    assert [r["name"] for r in ws.json("profile", "ls")] == ["site-one"]


def test_saving_a_profile_refuses_values_no_launch_could_take(ws: Workspace) -> None:
    for flags, says in (
        (("--cpu", "-1"), "profile odd: cpu: the CPU count must be a finite number above 0"),
        (("--size", "0"), "profile odd: size: must be at least 1, got 0"),
        (("--env", "NOEQUALS"), "env: item 1 is not KEY=VALUE"),
    ):
        refused = ws.cli("profile", "save", "odd", *flags)
        assert refused.returncode == 2 and says in refused.stderr, str(refused)
        assert "Traceback" not in refused.stderr
    # over this site's limits (1 agent, 2 CPUs) is kept: limits differ and change
    kept = ws.ok_cli("profile", "save", "big", "--size", "99", "--cpu", "64")
    assert kept.stdout.strip() == "saved launch profile big"
    assert [r["name"] for r in ws.json("profile", "ls")] == ["big"]
