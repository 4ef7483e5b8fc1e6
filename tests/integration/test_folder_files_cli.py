"""Files in data folders from the CLI: ``folder ls NAME[/PATH]`` and ``folder cp`` both ways.

A real CLI in its own workspace: a file copied in is listed, copied back out
byte for byte, and seen by a real session that mounts the folder (the work user
can read and write it); wrong input gets a clear error and no traceback.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from jupyter_cluster.core.uids import DEFAULT_WORK_UID
from tests.support.constants import SMALL_FLAGS

from .support import Workspace

pytestmark = pytest.mark.docker
#: A file on every Linux that no one may read (mode 0200), root included.
WRITE_ONLY = "/proc/sys/vm/drop_caches"


def test_ls_and_cp_both_ways(ws: Workspace, tmp_path: Path) -> None:
    ws.ok_cli("folder", "create", "data")
    blob = tmp_path / "blob.bin"
    blob.write_bytes(os.urandom(3 * 1024 * 1024 + 7))  # several chunks and a tail
    done = ws.ok_cli("folder", "cp", str(blob), "data:")
    assert "data:blob.bin" in done.stdout
    top = ws.folders_root / "data"
    (top / "sub").mkdir()
    ws.ok_cli("folder", "cp", str(blob), "data:sub/renamed.bin")
    made = ws.ok_cli("folder", "cp", str(blob), "data:made/deeper/")  # made as mkdir -p
    assert "data:made/deeper/blob.bin" in made.stdout
    assert (top / "made" / "deeper" / "blob.bin").read_bytes() == blob.read_bytes()
    for folder in (top / "made", top / "made" / "deeper"):  # work may write in them
        made_dir = folder.stat()
        assert made_dir.st_uid == DEFAULT_WORK_UID or stat.S_IMODE(made_dir.st_mode) == 0o777
    listed = json.loads(ws.ok_cli("folder", "ls", "data", "--json").stdout)
    assert [(e["name"], e["type"]) for e in listed] == [
        ("blob.bin", "file"),
        ("made", "directory"),
        ("sub", "directory"),
    ]
    assert listed[0]["size"] == blob.stat().st_size
    table = ws.ok_cli("folder", "ls", "data/sub").stdout
    assert "renamed.bin" in table and "NAME" in table
    out = tmp_path / "out"
    out.mkdir()
    ws.ok_cli("folder", "cp", "data:sub/renamed.bin", str(out))
    assert (out / "renamed.bin").read_bytes() == blob.read_bytes()
    ws.ok_cli("folder", "cp", "data:blob.bin", str(out / "copy.bin"))
    assert (out / "copy.bin").read_bytes() == blob.read_bytes()
    assert sorted(os.listdir(out)) == ["copy.bin", "renamed.bin"]  # no temporary left
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE((out / "copy.bin").stat().st_mode) == 0o666 & ~umask  # as cp makes it
    # plain `folder ls` is still the folders
    assert [f["name"] for f in ws.json("folder", "ls")] == ["data"]

    os.symlink("/etc", top / "etc")
    [link] = json.loads(ws.ok_cli("folder", "ls", "data/etc", "--json").stdout)
    assert link["type"] == "link"  # listed as what it is, never followed
    for args, words in (
        (("folder", "cp", str(blob), str(out)), "one side must be a data folder"),
        (("folder", "cp", "data:a", "data:b"), "one side must be a data folder"),
        (("folder", "cp", str(blob), "data:../x"), "'..'"),
        (("folder", "cp", "data:etc/passwd", str(out)), "link"),
        (("folder", "cp", str(blob), "data:etc/new/x"), "link"),  # no folder made through it
        (("folder", "cp", str(blob), "data:blob.bin/x"), "not a directory"),
        (("folder", "cp", "data:nothing", str(out)), "no file or directory"),
        (("folder", "cp", str(tmp_path / "nope"), "data:"), "not a file"),
        (("folder", "ls", "data/etc/ssl"), "link"),
        (("folder", "ls", "nope"), "no data folder"),
        # a local side that cannot be written: cp's errors, not a traceback
        (("folder", "cp", "data:blob.bin", f"{out}/newdir/"), "/newdir/ is not a directory"),
        (("folder", "cp", "data:blob.bin", f"{out}/no/x.bin"), f"{out}/no is not a directory"),
        (("folder", "cp", "data:blob.bin", "/proc/x.bin"), "cannot write /proc/x.bin"),
        # a file nobody may read (write-only, even for root): refused before anything
        # is made in the folder, not a traceback after its directories were
        (("folder", "cp", WRITE_ONLY, "data:unmade/"), f"cannot read {WRITE_ONLY}"),
    ):
        result = ws.cli(*args)
        assert result.returncode != 0, args
        assert words in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.stderr
    assert sorted(os.listdir(out)) == ["copy.bin", "renamed.bin"]
    assert not (top / "unmade").exists()


def test_rm_deletes_a_path_in_a_folder_never_the_folder_by_accident(
    ws: Workspace, tmp_path: Path
) -> None:
    ws.ok_cli("folder", "create", "data")
    src = tmp_path / "f.txt"
    src.write_text("x\n")
    ws.ok_cli("folder", "cp", str(src), "data:runs/old/f.txt")
    ws.ok_cli("folder", "cp", str(src), "data:top.txt")
    top = ws.folders_root / "data"
    os.symlink("/etc", top / "etc")
    for args, words in (
        (("folder", "rm", "data/"), "`jupyter cluster folder rm data` deletes the whole folder"),
        (("folder", "rm", "data/runs"), "'data/runs' is not empty; delete it with recursive"),
        (("folder", "rm", "data/nothing"), "no file or directory"),
        (("folder", "rm", "data/../x"), "'..'"),
    ):
        result = ws.cli(*args)
        assert result.returncode == 2 and words in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.stderr
    assert ws.ok_cli("folder", "rm", "data/top.txt").stdout.strip() == "deleted data/top.txt"
    ws.ok_cli("folder", "rm", "-r", "data/runs")
    ws.ok_cli("folder", "rm", "-r", "data/etc")  # the link itself, not what it points to
    assert os.listdir(top) == [] and os.path.isfile("/etc/passwd")
    assert [f["name"] for f in ws.json("folder", "ls")] == ["data"]  # the folder stays


def test_a_session_sees_a_copied_file_and_writes_back(ws: Workspace, tmp_path: Path) -> None:
    ws.ok_cli("folder", "create", "data")
    src = tmp_path / "in.txt"
    src.write_text("from the laptop\n")
    ws.ok_cli("folder", "cp", str(src), "data:in.txt")
    session = ws.launch(*SMALL_FLAGS, "--mount", "data")
    sid = session["id"]
    seen = ws.sh(sid, "main1", "cat /home/work/data/in.txt && echo back > /home/work/data/out.txt")
    assert "from the laptop" in seen
    ws.ok_cli("folder", "cp", "data:out.txt", str(tmp_path / "out.txt"))
    assert (tmp_path / "out.txt").read_text() == "back\n"
    ws.ok_cli("rm", sid)
