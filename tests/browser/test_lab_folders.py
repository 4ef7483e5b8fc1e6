"""Data folders in JupyterLab's "Data folders" panel: a real ``jupyter lab``, Chromium.

The server runs with one shared folder (``ClusterManager.shared_folders``) holding a
file; ``lab_folders.js`` sees it marked read-only, then through the panel's toolbar
makes a data folder, uploads a file of random bytes into it (throttled, so the
progress shows), downloads it, renames it, deletes it, opens a notebook stored in
the folder, saves an edit of it and removes the folder. The script reads the
server's side through REST after each step; this test checks the bytes (uploaded
and downloaded) against the file's and what each listing held. Screenshots (the
folder view: ``folders-view.png``) and ``results.json`` go to
``test-artifacts/browser-folders/``. Needs what ``test_lab_e2e.py`` needs (it shares
its ``lab`` fixture); fails, never skips, without it.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.lab import ARTIFACTS_ROOT, CHROMIUM

from .test_lab_apps import run_lab_script
from .test_lab_e2e import Lab
from .test_lab_e2e import lab as _lab  # noqa: F401  (the server, as fixture _lab)
from .test_lab_e2e import prerequisites as _prerequisites  # noqa: F401  (autouse)

pytestmark = pytest.mark.docker

ARTIFACTS = ARTIFACTS_ROOT / "browser-folders"
SHARED = "refs"
FOLDER = "uitest"
#: Big enough that a throttled upload reports progress a few times.
UPLOAD_SIZE = 3 * 1024 * 1024 + 123


@pytest.fixture(scope="module", autouse=True)
def _shared_folder_option() -> Iterator[None]:
    """The server (``test_lab_e2e``'s ``lab`` fixture, started after this) offers the
    shared folder SHARED to every user."""
    name = "JUPYTER_CLUSTER_E2E_LAB_ARGS"
    before = os.environ.get(name)
    os.environ[name] = f"{before or ''} --ClusterManager.shared_folders={SHARED}".strip()
    yield
    if before is None:
        del os.environ[name]
    else:
        os.environ[name] = before


def test_data_folders_in_the_lab_panel(_lab: Lab, tmp_path: Path) -> None:  # noqa: F811
    lab = _lab  # test_lab_e2e's server fixture
    shared = lab.data_dir / "cluster" / "folders" / ".shared" / SHARED
    shared.mkdir(parents=True)
    (shared / "README.txt").write_text("read me\n")
    upload = tmp_path / "data.bin"
    upload.write_bytes(os.urandom(UPLOAD_SIZE))
    digest = hashlib.sha256(upload.read_bytes()).hexdigest()

    env = {
        "LAB_URL": lab.url,
        "LAB_TOKEN": lab.token,
        "FOLDER": FOLDER,
        "SHARED": SHARED,
        "UPLOAD_FILE": str(upload),
        "ARTIFACTS": str(ARTIFACTS),
        "CHROMIUM": CHROMIUM,
    }
    results, output = run_lab_script("lab_folders.js", env, ARTIFACTS, lab)

    assert results["ok"], f"{json.dumps(results, indent=1)}\n{output}"
    out = results["outputs"]
    assert out["sharedReadonly"] == "read-only", out
    assert out["folderReadonly"] is None, out
    created = {f["name"]: f["shared"] for f in out["foldersAfterCreate"]}
    assert created == {SHARED: True, FOLDER: False}, out
    # Uploaded through the panel: the server holds exactly the file's bytes, and the
    # panel showed the upload's progress on its way.
    assert out["restStatus"] == 200 and out["restSize"] == UPLOAD_SIZE, out
    assert out["restSha"] == digest, out
    progress = out["progress"]
    assert progress and progress[-1] == 100, progress
    assert any(0 < p < 100 for p in progress), progress
    assert progress == sorted(progress), progress
    # Downloaded through the panel: the same bytes, under the file's name.
    assert out["downloadName"] == "data.bin" and out["downloadSha"] == digest, out
    assert out["afterRename"] == ["renamed.bin"], out
    # Lab's context menu renamed in this panel (its editor held this file's name).
    assert out["contextRenameValue"] == "renamed.bin", out
    assert out["afterDelete"] == [], out
    # A notebook stored in the folder opens as a Lab notebook and saves back there.
    assert out["notebookPut"] == 201, out
    assert out["notebookHeading"] == "hello from a data folder", out
    assert out["notebookTab"].split("\n")[:2] == [
        "Name: nb.ipynb",
        f"Path: ClusterFolders:{FOLDER}/nb.ipynb",
    ], out
    assert out["saveEnabled"] is True and out["savedStatus"] == 200, out
    assert out["savedSources"] == ["# hello from a data folder", 'print("saved back")'], out
    assert out["foldersAfterRemove"] == [SHARED], out
    # The shared folder was only read.
    assert (shared / "README.txt").read_text() == "read me\n"
    assert not (lab.data_dir / "cluster" / "folders" / FOLDER).exists()
    assert results["consoleErrors"] == [], results
    assert (ARTIFACTS / "folders-view.png").is_file()
