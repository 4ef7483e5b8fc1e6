"""The README's "Notebook kernels in the cluster" steps, as written there.

``kernelspec install cluster4 … --sys-prefix`` writes a kernelspec into the venv, and
``jupyter execute --kernel_name cluster4 nb.ipynb`` (the README's form without a
browser) runs a notebook whose kernel starts in main1 of a fresh 4-container session
that mounts data folder ``data``: the notebook's cells see the cluster, reach sub3
over SSH and write into the folder, and the session ends with the kernel. The
example asked for four 1-CPU containers, which a 2-CPU machine (this one, a laptop)
can never hold; ``kernelspec install`` now warns when it writes such a kernelspec.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import nbformat
import pytest

from jupyter_cluster.core.uids import DEFAULT_WORK_UID
from tests.support.readme import assert_readme_has, commands_of, ok_in_bash, readme_block

from .support import Workspace

INSTALL = (
    "jupyter cluster kernelspec install cluster4 --size 4 --cpu 0.5 --mem 1g --mount data "
    "--sys-prefix"
)
EXECUTE = "jupyter execute --kernel_name cluster4 nb.ipynb"
CELLS = [
    "import os, socket, subprocess",
    "seen = [socket.gethostname(), os.environ['BACKENDAI_CLUSTER_SIZE']]\n"
    "seen.append(subprocess.run(['ssh', 'sub3', 'hostname'], capture_output=True,"
    " text=True).stdout.strip())",
    "seen += [os.getcwd(), str(os.path.exists('nb.ipynb'))]",
    "open('/home/work/data/seen.txt', 'w').write(' '.join(seen))",
]


def test_a_cluster4_kernel_runs_a_notebook_as_the_readme_says(ws: Workspace) -> None:
    assert commands_of(readme_block("bash", INSTALL))[0] == INSTALL
    assert_readme_has([f"/ {EXECUTE}"])
    installed = Path(sys.prefix) / "share" / "jupyter" / "kernels" / "cluster4"
    kept = ws.root / "cluster4.kept"  # a developer's own cluster4, put back after
    if installed.exists():
        shutil.move(installed, kept)
    ws.ok_cli("folder", "create", "data")
    project = ws.root / "project"  # a user's project folder: others may enter it
    project.mkdir(mode=0o755)
    project.chmod(0o755)
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nbformat.write(notebook, project / "nb.ipynb")
    try:
        ok_in_bash(INSTALL, ws.env, ws.root)
        ok_in_bash(EXECUTE, ws.env, project)
    finally:
        shutil.rmtree(installed, ignore_errors=True)
        if kept.exists():
            shutil.move(kept, installed)
    # Outside a server the notebook's own folder is mounted (jupyter execute names it
    # with a pathlib.Path, which was taken for no folder at all): read-write when it
    # is work's, read-only when it is root's, as here in CI.
    owner = project.stat().st_uid
    where = "/mnt/lab" if owner in (0, DEFAULT_WORK_UID) else "/home/work"
    assert (ws.folders_root / "data" / "seen.txt").read_text() == (
        f"main1 4 sub3 {where} {where == '/mnt/lab'}"
    )
    [ended] = ws.json("ls", "--all")
    assert (ended["status"], ended["size"]) == ("TERMINATED", 4), ended
    assert ws.docker_objects() == ([], [])


def test_a_kernelspec_that_could_never_start_is_written_with_a_warning(ws: Workspace) -> None:
    """The README's old cluster4 (four 1-CPU containers) on this 2-CPU machine, and a
    folder not made yet: written, since agents and folders may come, with a warning
    that says why its kernels would not start now."""
    too_big = ws.cli("kernelspec", "install", "big4", "--size", "4", "--cpu", "1", "--user")
    assert too_big.returncode == 0, str(too_big)
    assert too_big.stdout.startswith("installed kernelspec big4 in "), str(too_big)
    assert too_big.stderr.startswith(
        "warning: kernel big4 cannot start as things are now: size: no agent of group "
        "'default' can ever hold 4 x (1 CPU, "
    ), str(too_big)
    folder = ws.cli("kernelspec", "install", "withdata", "--mount", "data", "--user")
    assert folder.returncode == 0 and "no data folder named 'data'" in folder.stderr, str(folder)
    ws.ok_cli("folder", "create", "data")
    fine = ws.cli("kernelspec", "install", "withdata", "--mount", "data", "--user")
    assert fine.returncode == 0 and fine.stderr == "", str(fine)
    assert (ws.data_dir / "kernels" / "big4" / "kernel.json").is_file()


def test_a_root_owned_folder_work_may_not_enter_is_not_mounted_and_the_kernel_says_why(
    ws: Workspace,
) -> None:
    """A notebook in a folder only root may enter (mode 0700, as a temporary
    directory is): mounted read-only there, the kernel could not even start in it
    (work is never root) and the start failed with "folder /mnt/lab is not in
    main1". It starts in /home/work instead, its first output saying why."""
    if os.getuid() != 0:
        if os.environ.get("CI"):  # CI runs as root: never hide this test there
            pytest.fail("CI must run this test as root")
        pytest.skip("needs root, to own the notebook's folder")
    ws.ok_cli("kernelspec", "install", "one", "--size", "1", "--cpu", "0.5", "--user")
    closed = ws.root / "closed"
    closed.mkdir()
    closed.chmod(0o700)
    cell = "import os; print(os.getcwd())"
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)])
    nbformat.write(notebook, closed / "nb.ipynb")
    ok_in_bash("jupyter execute --kernel_name one nb.ipynb --inplace", ws.env, closed)
    outputs = nbformat.read(closed / "nb.ipynb", as_version=4).cells[0].outputs
    # the note is a display (text/plain), then what the cell printed
    shown = [o.get("text") or o.get("data", {}).get("text/plain", "") for o in outputs]
    printed = "\n".join(text.rstrip("\n") for text in shown)
    note = (
        "jupyter-cluster: the notebook's folder is not mounted: its server's root folder "
        f"belongs to root, and work (uid {DEFAULT_WORK_UID}) may not enter {closed} "
        "(mode 0700); relative paths are in /home/work"
    )
    assert printed.splitlines() == [note, "/home/work"], printed
    assert ws.docker_objects() == ([], [])


def test_a_kernelspec_that_cannot_be_written_where_asked_says_so(ws: Workspace) -> None:
    """A --prefix that is a file (or cannot be made) ended in a traceback."""
    a_file = ws.root / "not-a-dir"
    a_file.write_text("")
    done = ws.cli("kernelspec", "install", "k9", "--prefix", str(a_file))
    assert done.returncode == 2, str(done)
    assert done.stderr.splitlines() == [
        f"jupyter cluster: error: cannot write kernelspec k9: {a_file}/share: Not a directory; "
        "choose where with --user, --sys-prefix or --prefix"
    ], done.stderr
