"""The notebook's working directory: a notebook's cluster kernel starts in its folder.

A kernel the server starts for a notebook (``POST /api/kernels`` with the notebook's
``path``) gets the server's root folder mounted at /mnt/lab in every container of
its session, and starts in the notebook's folder there: ``open("data.csv")`` next to
the notebook works in main1 and over SSH from sub1, what the kernel writes belongs to
the root folder's owner on the host and shows in the contents API, and nothing of
the host outside that folder is reachable (``..``, symlinks). With
``mount_notebook_dir`` off the kernel starts in /home/work and its first output
says why. Real server, real Docker, real SSH.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from jupyter_cluster.config import local_owner
from tests.support.constants import SMALL_BODY
from tests.support.mounts import tmpfs_at

from .support import call, jp_async, ok_http, wait_kernel

pytestmark = pytest.mark.docker
#: work's uid in the containers: the test user's, or (as root, as in CI) the default
#: one, which then owns the server's root folder.
OWNER = os.getuid() or 1000
DATA = "x,y\n1,2\n"
SECRET = f"host-only-{uuid.uuid4().hex}"
SIZE2 = {"ClusterApp": {"default_launch_options": {**SMALL_BODY, "size": 2}}}
OWNED = {"ContainerHardening": {"work_uid": OWNER}}
NOTE = "notebook_dir"


@pytest.fixture
def cluster_config(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Size-2 session kernels whose work has the root folder's owner's uid; a test
    parametrizes extra settings."""
    extra = getattr(request, "param", {})
    return {**SIZE2, **OWNED, **extra}


@pytest.fixture
def notebook_folder(jp_root_dir: Path, tmp_path: Path) -> Path:
    """``proj/`` under the server's root with ``data.csv``, a symlink to a host file
    outside the root and one to the host's root directory; the tree belongs to OWNER."""
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    assert not secret.resolve().is_relative_to(jp_root_dir.resolve())
    folder = jp_root_dir / "proj"
    folder.mkdir()
    (folder / "data.csv").write_text(DATA)
    (folder / "escape.txt").symlink_to(secret)
    (folder / "hostroot").symlink_to("/")
    for path in (jp_root_dir, folder, folder / "data.csv"):
        os.chown(path, OWNER, OWNER)
    return folder


async def run_cell(ws: Any, code: str, timeout: float = 60) -> list[str]:
    """Run ``code``; the texts of its outputs in order (streams and plain-text displays)."""
    msg_id = uuid.uuid4().hex
    header = {"msg_id": msg_id, "msg_type": "execute_request", "username": "test"}
    header.update(session=uuid.uuid4().hex, version="5.3", date="")
    content = {"code": code, "silent": False, "store_history": False, "allow_stdin": False}
    request = {"header": header, "parent_header": {}, "metadata": {}, "content": content}
    await ws.write_message(json.dumps({**request, "channel": "shell", "buffers": []}))
    texts: list[str] = []
    deadline = time.monotonic() + timeout
    while True:
        message = await ws.read_message()
        assert message is not None and time.monotonic() < deadline, texts
        data = json.loads(message)
        if data.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        kind, body = data["msg_type"], data["content"]
        if kind == "stream":
            texts.append(body["text"])
        elif kind == "display_data":
            texts.append(body["data"].get("text/plain", ""))
        elif kind == "error":
            pytest.fail(f"the kernel raised {body['ename']}: {body['evalue']}")
        elif kind == "status" and body["execution_state"] == "idle":
            return texts


async def start_notebook_kernel(fetch: Any, path: str) -> str:
    """Start the session kernel for the notebook at ``path`` (as Lab does); its id."""
    body = json.dumps({"name": "jupyter-cluster-session", "path": path})
    return str(json.loads((await fetch("api", "kernels", method="POST", body=body)).body)["id"])


ESCAPES = """
import os
tries = ["escape.txt", "hostroot{SECRET_PATH}", "../../..{SECRET_PATH}", "{SECRET_PATH}"]
for t in tries:
    try:
        print(t, "READ", open(t).read())
    except OSError as exc:
        print(t, "refused", type(exc).__name__)
"""


@jp_async
async def test_the_kernel_starts_in_the_notebooks_folder_in_every_container(
    jp_fetch: Any, jp_ws_fetch: Any, cluster: Any, notebook_folder: Path, tmp_path: Path
) -> None:
    kid = await start_notebook_kernel(jp_fetch, "proj/analysis.ipynb")
    ws = await jp_ws_fetch("api", "kernels", kid, "channels")
    try:
        out = await run_cell(ws, "import os; print(os.getcwd()); print(open('data.csv').read())")
        assert "".join(out) == f"/mnt/lab/proj\n{DATA}\n"  # no note: nothing to explain

        ssh = "import subprocess; print(subprocess.run(f'ssh sub1 \"cd {os.getcwd()} && "
        ssh += "hostname && cat data.csv\"', shell=True, capture_output=True, text=True).stdout)"
        assert "".join(await run_cell(ws, ssh)) == f"sub1\n{DATA}\n"

        await run_cell(ws, "open('written.txt', 'w').write('from main1')")
        written = notebook_folder / "written.txt"
        assert written.read_text() == "from main1"
        assert (written.stat().st_uid, written.stat().st_gid) == (OWNER, OWNER)
        listing = json.loads((await jp_fetch("api", "contents", "proj")).body)
        assert "written.txt" in {item["name"] for item in listing["content"]}
        model = json.loads((await jp_fetch("api", "contents", "proj", "written.txt")).body)
        assert model["content"] == "from main1"

        secret_path = str((tmp_path / "secret.txt").resolve())
        code = ESCAPES.replace("{SECRET_PATH}", secret_path)
        tried = "".join(await run_cell(ws, code))
        assert SECRET not in tried and "READ" not in tried, tried
        assert tried.count("refused") == 4, tried
    finally:
        ws.close()
    # A restart replaces the kernel in the same session, in the same folder.
    await jp_fetch("api", "kernels", kid, "restart", method="POST", body="")
    ws = await jp_ws_fetch("api", "kernels", kid, "channels")
    try:
        out = await run_cell(ws, "import os; print(os.getcwd(), open('written.txt').read())")
        assert "".join(out) == "/mnt/lab/proj from main1\n"
    finally:
        ws.close()
    [session] = await ok_http(jp_fetch, "sessions")
    await jp_fetch("api", "kernels", kid, method="DELETE")
    assert session["size"] == 2


@jp_async
async def test_a_notebooks_kernel_is_told_where_its_notebook_is_in_main1(
    jp_fetch: Any, jp_ws_fetch: Any, cluster: Any, notebook_folder: Path, jp_root_dir: Path
) -> None:
    """Opened as Lab opens a notebook (``POST /api/sessions``), the kernel gets
    jupyter_server's ``JPY_SESSION_NAME`` as a local one does (ipykernel's
    ``__session__``, what experiment trackers read), naming the notebook where main1
    has it: it reads the notebook there. The server's own path is not passed on."""
    notebook = notebook_folder / "analysis.ipynb"
    notebook.write_text(
        json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    )
    os.chown(notebook, OWNER, OWNER)
    body = {
        "path": "proj/analysis.ipynb",
        "name": "analysis.ipynb",
        "type": "notebook",
        "kernel": {"name": "jupyter-cluster-session"},
    }
    made = await jp_fetch("api", "sessions", method="POST", body=json.dumps(body))
    jupyter_session = json.loads(made.body)
    ws = await jp_ws_fetch("api", "kernels", jupyter_session["kernel"]["id"], "channels")
    try:
        code = (
            "import json, os; name = os.environ['JPY_SESSION_NAME']; "
            "print(name, json.load(open(name))['nbformat'])"
        )
        assert "".join(await run_cell(ws, code)) == "/mnt/lab/proj/analysis.ipynb 4\n"
        everything = "".join(await run_cell(ws, "import os; print(dict(os.environ))"))
        assert str(jp_root_dir.resolve()) not in everything, everything
    finally:
        ws.close()
        await jp_fetch("api", "sessions", jupyter_session["id"], method="DELETE")


READ_BACK = """
import errno, os, subprocess
print(os.getcwd(), open("data.csv").read())
try:
    open("out.txt", "w")
except OSError as exc:
    print("write:", errno.errorcode[exc.errno])
cat = f'ssh sub1 "cd {os.getcwd()} && cat data.csv"'
print(subprocess.run(cat, shell=True, capture_output=True, text=True).stdout)
try:
    open("scratch/x", "w")
except OSError as exc:
    print("below:", os.listdir("scratch"), errno.errorcode[exc.errno])
"""


@jp_async
@pytest.mark.parametrize("cluster_config", [SIZE2], indirect=True)
async def test_a_root_owned_root_folder_is_there_read_only(
    jp_fetch: Any, jp_ws_fetch: Any, cluster: Any, jp_root_dir: Path
) -> None:
    """The README's ``make lab`` runs the server as root, from root's clone: the
    notebook's neighbours are read in main1 and over SSH, nothing can be written
    there (work is never root), and the first output says so and what to do."""
    if os.getuid() != 0:
        if os.environ.get("CI"):  # CI runs as root: never hide this test there
            pytest.fail("CI must run this test as root")
        pytest.skip("needs root, to serve a root-owned folder")
    folder = jp_root_dir / "clone"
    folder.mkdir()
    (folder / "data.csv").write_text(DATA)
    assert jp_root_dir.stat().st_uid == 0 and folder.stat().st_uid == 0
    # A file system mounted below it, writable by all (as /tmp is below "/"): Docker's
    # read-only bind would leave it writable; it must stay out of the containers.
    with tmpfs_at(folder / "scratch", "inside.txt", "on the tmpfs") as scratch:
        kid = await start_notebook_kernel(jp_fetch, "clone/analysis.ipynb")
        ws = await jp_ws_fetch("api", "kernels", kid, "channels")
        try:
            out = await run_cell(ws, READ_BACK)
            assert out[0].startswith("jupyter-cluster: the notebook's folder is mounted read-only")
            assert "run the server as a user other than root" in out[0], out
            printed = "".join(out[1:])
            expected = f"/mnt/lab/clone {DATA}\nwrite: EROFS\n{DATA}\nbelow: [] EROFS\n"
            assert printed == expected, printed
        finally:
            ws.close()
        await jp_fetch("api", "kernels", kid, method="DELETE")
        assert sorted(p.name for p in scratch.iterdir()) == ["inside.txt"]
    assert sorted(p.name for p in folder.iterdir()) == ["data.csv", "scratch"]


@jp_async
@pytest.mark.parametrize(
    "cluster_config",
    [
        {
            "ClusterApp": {"default_launch_options": SMALL_BODY},
            "ClusterProvisioner": {"mount_notebook_dir": False},
        }
    ],
    indirect=True,
)
async def test_off_the_kernel_starts_in_home_and_its_first_output_says_why(
    jp_fetch: Any, jp_ws_fetch: Any, cluster: Any, notebook_folder: Path
) -> None:
    kid = await start_notebook_kernel(jp_fetch, "proj/analysis.ipynb")
    ws = await jp_ws_fetch("api", "kernels", kid, "channels")
    try:
        first = await run_cell(ws, "import os; print(os.getcwd())")
        assert first[-1] == "/home/work\n"
        note = "".join(first[:-1])
        assert note.startswith("jupyter-cluster: the notebook's folder is not mounted"), first
        assert "c.ClusterProvisioner.mount_notebook_dir is off" in note
        assert await run_cell(ws, "print(os.path.exists('/mnt/lab'))") == ["False\n"]
    finally:
        ws.close()
    await jp_fetch("api", "kernels", kid, method="DELETE")


@pytest.fixture
def data_folder(jp_data_dir: Path) -> Path:
    """Data folder ``nbdata``, made before the server starts (its session kernelspec
    checks the launch defaults' folders then)."""
    folder = jp_data_dir / "cluster" / "folders" / "nbdata"
    folder.mkdir(parents=True)
    return folder


@jp_async
@pytest.mark.parametrize(
    "cluster_config",
    [{"ClusterApp": {"default_launch_options": {**SMALL_BODY, "mounts": ["nbdata"]}}}],
    indirect=True,
)
async def test_a_notebook_in_a_mounted_data_folder_starts_there(
    data_folder: Path, jp_fetch: Any, jp_ws_fetch: Any, cluster: Any, jp_root_dir: Path
) -> None:
    """The notebook's folder is a data folder the session mounts (reached through a
    symlink under the root, so the root's mount cannot hold it): the kernel starts in
    that folder at /home/work/nbdata, and says nothing."""
    assert cluster.engine.folders_for(local_owner()).path("nbdata") == data_folder
    (data_folder / "data.csv").write_text(DATA)
    (jp_root_dir / "indata").symlink_to(data_folder)
    kid = await start_notebook_kernel(jp_fetch, "indata/analysis.ipynb")
    ws = await jp_ws_fetch("api", "kernels", kid, "channels")
    try:
        out = await run_cell(ws, "import os; print(os.getcwd()); print(open('data.csv').read())")
        assert "".join(out) == f"/home/work/nbdata\n{DATA}\n"
    finally:
        ws.close()
    await jp_fetch("api", "kernels", kid, method="DELETE")


@jp_async
async def test_a_rest_launch_with_a_kernel_starts_it_in_the_folder_it_names(
    jp_fetch: Any, jp_ws_fetch: Any, cluster: Any, notebook_folder: Path
) -> None:
    """The Lab's launch dialog: ``POST sessions`` with ``start_kernel`` and the folder
    its notebook opens in (``notebook_dir``). The session mounts the root folder and
    the kernel starts in that folder, in every container alike; a ``..`` is refused."""
    body = {**SMALL_BODY, "size": 2, "start_kernel": True}
    code, data, _ = await call(jp_fetch, "sessions", method="POST", body={**body, NOTE: "../x"})
    assert code == 400 and data["field"] == NOTE, data
    session = await ok_http(jp_fetch, "sessions", method="POST", body={**body, NOTE: "proj"})
    ready = await wait_kernel(jp_fetch, session["id"])
    ws = await jp_ws_fetch("api", "kernels", ready["kernel_id"], "channels")
    try:
        out = await run_cell(ws, "import os; print(os.getcwd()); print(open('data.csv').read())")
        assert "".join(out) == f"/mnt/lab/proj\n{DATA}\n"
        ssh = (
            "import subprocess; print(subprocess.getoutput('ssh sub1 cat /mnt/lab/proj/data.csv'))"
        )
        assert "".join(await run_cell(ws, ssh)) == DATA  # getoutput drops the last newline
    finally:
        ws.close()
    await ok_http(jp_fetch, "sessions", session["id"], method="DELETE")
