"""A notebook opened from Lab's data-folders drive gets its cluster kernel in its folder.

Lab opens ``ClusterFolders:NAME/nb.ipynb`` and creates its session with that path
(``POST /api/sessions``, as Lab's session context does). The cluster kernel's new
session mounts data folder NAME (the kernelspec does not) and the kernel starts in
``/home/work/NAME``: ``open("data.csv")`` reads the folder's file, what it writes
lands in the folder on the host, owned by work's uid, and a restart starts in the
same folder. A drive path with ``..`` or naming another owner's folder mounts
nothing: /home/work, and the first output says why. A local kernel for a drive
notebook starts as jupyter_server starts it. The Lab's launch dialog's kernel
(REST ``start_kernel`` with a drive ``notebook_dir``) starts in a running session:
in the folder when the launch mounts it, else in /home/work, saying why. Real
server, real Docker.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.support.constants import SMALL_BODY

from .support import jp_async, ok_http, wait_kernel
from .test_workdir import run_cell

pytestmark = pytest.mark.docker
#: work's uid in the containers (the test user's, or as root the default one).
OWNER = os.getuid() or 1000
NAME = "drivenb"
DATA = "a,b\n3,4\n"
KERNEL = "jupyter-cluster-session"


@pytest.fixture
def cluster_config() -> dict[str, Any]:
    """Size-1 session kernels that mount no data folder of their own."""
    return {
        "ClusterApp": {"default_launch_options": SMALL_BODY},
        "ContainerHardening": {"work_uid": OWNER},
    }


async def open_notebook(fetch: Any, path: str, kernel: str = KERNEL) -> tuple[str, str]:
    """Create the Jupyter session Lab creates for the notebook at ``path`` (a drive
    path); its id and its kernel's."""
    body = {"path": path, "name": path.rsplit("/", 1)[-1], "type": "notebook"}
    body["kernel"] = {"name": kernel}  # type: ignore[assignment]
    reply = await fetch("api", "sessions", method="POST", body=json.dumps(body))
    model = json.loads(reply.body)
    return model["id"], model["kernel"]["id"]


async def close_notebook(fetch: Any, session_id: str) -> None:
    """Delete the Jupyter session (its kernel, and with it the cluster session)."""
    await fetch("api", "sessions", session_id, method="DELETE")


@jp_async
async def test_a_drive_notebooks_kernel_mounts_its_folder_and_starts_in_it(
    jp_fetch: Any, jp_ws_fetch: Any, cluster: Any
) -> None:
    info = await ok_http(jp_fetch, "folders", method="POST", body={"name": NAME})
    folder = Path(info["path"])
    (folder / "data.csv").write_text(DATA)
    sid, kid = await open_notebook(jp_fetch, f"ClusterFolders:{NAME}/nb.ipynb")
    ws = await jp_ws_fetch("api", "kernels", kid, "channels")
    try:
        out = await run_cell(ws, "import os; print(os.getcwd()); print(open('data.csv').read())")
        assert "".join(out) == f"/home/work/{NAME}\n{DATA}\n"  # no note: nothing to explain
        await run_cell(ws, "open('written.txt', 'w').write('from main1')")
        written = folder / "written.txt"
        assert written.read_text() == "from main1"
        assert written.stat().st_uid == OWNER
        # The server's root folder is not mounted for it.
        assert await run_cell(ws, "print(os.path.exists('/mnt/lab'))") == ["False\n"]
        # Told where its notebook is, as a local kernel is (JPY_SESSION_NAME): in main1.
        name = await run_cell(ws, "print(os.environ['JPY_SESSION_NAME'])")
        assert name == [f"/home/work/{NAME}/nb.ipynb\n"], name
    finally:
        ws.close()
    [session] = await ok_http(jp_fetch, "sessions")
    assert [m.split(":")[0] for m in session["mounts"]] == [NAME], session
    # A restart replaces the kernel in the same session, in the same folder.
    await jp_fetch("api", "kernels", kid, "restart", method="POST", body="")
    ws = await jp_ws_fetch("api", "kernels", kid, "channels")
    try:
        out = await run_cell(ws, "import os; print(os.getcwd(), open('written.txt').read())")
        assert "".join(out) == f"/home/work/{NAME} from main1\n"
    finally:
        ws.close()
    await close_notebook(jp_fetch, sid)


@jp_async
@pytest.mark.parametrize(
    ("path", "said"),
    [
        (f"ClusterFolders:../{NAME}/nb.ipynb", "leaves its data folder"),
        ("ClusterFolders:theirs/nb.ipynb", "'theirs' is neither one of yours nor a shared"),
    ],
)
async def test_a_bad_or_foreign_drive_path_mounts_nothing_and_says_why(
    jp_fetch: Any, jp_ws_fetch: Any, cluster: Any, jp_data_dir: Path, path: str, said: str
) -> None:
    await ok_http(jp_fetch, "folders", method="POST", body={"name": NAME})
    theirs = jp_data_dir / "cluster" / "folders" / ".owners" / "other" / "theirs"
    theirs.mkdir(parents=True)  # another owner's folder on the same disk
    (theirs / "data.csv").write_text(DATA)
    sid, kid = await open_notebook(jp_fetch, path)
    ws = await jp_ws_fetch("api", "kernels", kid, "channels")
    try:
        first = await run_cell(ws, "import os; print(os.getcwd())")
        assert first[-1] == "/home/work\n"
        # Its notebook is not in main1: no name for it (and none of the server's).
        named = await run_cell(ws, "print(os.environ.get('JPY_SESSION_NAME'))")
        assert named == ["None\n"], named
        note = "".join(first[:-1])
        assert note.startswith("jupyter-cluster: no data folder is mounted") or note.startswith(
            "jupyter-cluster: the notebook's data folder"
        ), first
        assert said in note, note
        out = await run_cell(ws, "print(sorted(os.listdir('/home/work')))")
        assert NAME not in out[0] and "theirs" not in out[0], out
    finally:
        ws.close()
    [session] = await ok_http(jp_fetch, "sessions")
    assert session["mounts"] == [], session
    await close_notebook(jp_fetch, sid)


@jp_async
async def test_a_local_kernel_for_a_drive_notebook_starts_as_before(
    jp_fetch: Any, jp_ws_fetch: Any, cluster: Any, jp_root_dir: Path
) -> None:
    sid, kid = await open_notebook(jp_fetch, f"ClusterFolders:{NAME}/nb.ipynb", "python3")
    ws = await jp_ws_fetch("api", "kernels", kid, "channels")
    try:
        out = await run_cell(ws, "import os; print(os.getcwd())")
        assert out == [f"{jp_root_dir.resolve()}\n"] or out == [f"{jp_root_dir}\n"], out
    finally:
        ws.close()
    assert await ok_http(jp_fetch, "sessions") == []
    await close_notebook(jp_fetch, sid)


@jp_async
async def test_a_launch_dialogs_kernel_starts_in_a_drive_folder_its_session_mounts(
    jp_fetch: Any, jp_ws_fetch: Any, cluster: Any
) -> None:
    info = await ok_http(jp_fetch, "folders", method="POST", body={"name": NAME})
    (Path(info["path"]) / "data.csv").write_text(DATA)
    body = {**SMALL_BODY, "start_kernel": True, "notebook_dir": f"ClusterFolders:{NAME}"}
    for mounts, expected in (([NAME], f"/home/work/{NAME}\n"), ([], "/home/work\n")):
        session = await ok_http(
            jp_fetch, "sessions", method="POST", body={**body, "mounts": mounts}
        )
        assert session["mounts"] == mounts, session
        ready = await wait_kernel(jp_fetch, session["id"])
        ws = await jp_ws_fetch("api", "kernels", ready["kernel_id"], "channels")
        try:
            out = await run_cell(ws, "import os; print(os.getcwd())")
            assert out[-1] == expected, out
            if mounts:
                assert out == [expected]  # nothing to explain
                assert await run_cell(ws, "print(open('data.csv').read())") == [f"{DATA}\n"]
            else:
                note = "".join(out[:-1])
                assert f"does not mount the notebook's data folder '{NAME}'" in note, out
            assert await run_cell(ws, "print(os.path.exists('/mnt/lab'))") == ["False\n"]
        finally:
            ws.close()
        await ok_http(jp_fetch, "sessions", session["id"], method="DELETE")
