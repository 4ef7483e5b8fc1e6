"""Renaming a data folder from the CLI: ``jupyter cluster folder mv OLD NEW``.

A real CLI in its own workspace: the folder and its files take the new name and
a real session mounts it by that name; a folder a running session mounts, a taken
or bad name and a missing folder are refused with a clear error, no traceback and
nothing changed.
"""

from __future__ import annotations

import os

import pytest

from tests.support.constants import SMALL_FLAGS

from .support import Workspace

pytestmark = pytest.mark.docker


def test_mv_renames_a_folder_and_refuses_what_it_must(ws: Workspace) -> None:
    ws.ok_cli("folder", "create", "data")
    ws.ok_cli("folder", "create", "other")
    (ws.folders_root / "data" / "a.txt").write_text("kept\n")
    done = ws.ok_cli("folder", "mv", "data", "results")
    assert "renamed data folder data to results" in done.stdout
    assert [f["name"] for f in ws.json("folder", "ls")] == ["other", "results"]
    assert (ws.folders_root / "results" / "a.txt").read_text() == "kept\n"

    session = ws.launch(*SMALL_FLAGS, "--mount", "results")
    sid = session["id"]
    try:
        assert ws.sh(sid, "main1", "cat /home/work/results/a.txt").strip() == "kept"
        result = ws.cli("folder", "mv", "results", "moved")
        assert result.returncode != 0
        assert "mounted by session" in result.stderr and session["name"] in result.stderr
        assert "Traceback" not in result.stderr
    finally:
        ws.ok_cli("rm", sid)
    for args, words in (
        (("folder", "mv", "results", "other"), "already exists"),
        (("folder", "mv", "results", "../x"), "not a valid folder name"),
        (("folder", "mv", "nothing", "x"), "no data folder"),
        (("folder", "mv", "results"), "NEW"),
    ):
        result = ws.cli(*args)
        assert result.returncode != 0, args
        assert words in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.stderr
    assert sorted(os.listdir(ws.folders_root)) == ["other", "results"]
    same = ws.ok_cli("folder", "mv", "results", "results")  # it said "renamed"
    assert same.stdout == "data folder results has that name already; nothing renamed\n"
    ws.ok_cli("folder", "mv", "results", "moved")
    assert [f["name"] for f in ws.json("folder", "ls")] == ["moved", "other"]
