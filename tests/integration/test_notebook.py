"""The notebook side against real Docker (issue #5): the Python API (sync in a script,
async in a kernel), the launch form driven through its widget models, the
``%cluster`` magic in a cluster kernel (in main1) and in a local kernel, and the
example notebooks run with ``jupyter execute``.

Every test has its own workspace (``ws``: private Jupyter data/config dirs, hence
its own store and manager id). The engine is a singleton per process, so it is
never used in the test process: scripts and kernels run as subprocesses with the
workspace's environment. At the end of each test the workspace fails it if any
container or network labelled with its manager id remains (and removes them).
"""

from __future__ import annotations

import json
import sys
import textwrap
import time
from typing import Any

import pytest
from jupyter_client.asynchronous import AsyncKernelClient

from tests.support.constants import EXAMPLES, HOSTS, MIB, READY, SIZE3_FLAGS
from tests.support.docker import docker, inspect, session_objects
from tests.support.kernels import ok_cell, run_cell

from .notebook_support import (
    execute_notebook,
    kernel,
    kernel_name_of,
    local_kernel,
    refused_line,
    stable_prefix,
)
from .support import Workspace

pytestmark = pytest.mark.docker

BOOT = "echo boot-$BACKENDAI_CLUSTER_HOST"
MPI_IMAGE = "jupyter-cluster/mpi:latest"
EXAMPLES_MPI = EXAMPLES / "images" / "mpi"


def assert_no_docker_objects(ws: Workspace) -> None:
    """Nothing labelled with the workspace's manager id is left (the test's own check;
    the workspace's finish removes and reports leaks too)."""
    assert ws.docker_objects() == ([], []), "the session left containers or networks behind"


# -- 1. the Python API -------------------------------------------------------------------

SYNC_SCRIPT = textwrap.dedent(
    """
    import json, sys
    from jupyter_cluster import ClusterSession
    from jupyter_cluster.core.state import SessionStatus

    def say(**data):
        print(json.dumps(data), flush=True)

    checked = ClusterSession.check(size=2, cpu=0.5, mem="256m").to_dict()
    s = ClusterSession.launch(size=2, cpu=0.5, mem="256m", bootstrap=sys.argv[1])
    assert s.status is SessionStatus.RUNNING
    r = s.exec("sub1", "hostname; echo to-stderr >&2; exit 3")
    listed = [x.id for x in ClusterSession.list()]
    say(id=s.id, hosts=s.hosts, status=s.status.value, listed=listed, checked=checked,
        logs=s.logs("sub1", tail=20), last=s.logs("sub1", tail=1), main=s.logs(tail=20),
        exec=[r.exit_code, r.stdout, r.stderr],
        argv=s.exec("main1", ["sh", "-c", 'echo "$0 $BACKENDAI_CLUSTER_HOST"', "a b"]).stdout)
    sys.stdin.readline()  # the test checks Docker meanwhile
    ended = s.terminate()
    say(status=ended.status.value, fresh=s.status.value)
    """
)


def test_python_api_sync_in_a_script(ws: Workspace) -> None:
    script = ws.root / "api_sync.py"
    script.write_text(SYNC_SCRIPT)
    # -W default: every warning shows, ResourceWarning too (an event loop left open)
    proc = ws.popen(sys.executable, "-W", "default", str(script), BOOT, stdin=True)
    try:
        assert proc.stdout is not None and proc.stdin is not None
        line = proc.stdout.readline()
        assert line, proc.communicate(timeout=30)
        got = json.loads(line)
        assert got["hosts"] == ["main1", "sub1"] and got["status"] == "RUNNING"
        assert got["listed"] == [got["id"]]  # the dry run before the launch made none
        assert got["checked"] == {
            "starts_now": True,
            "placement": {"main1": "local", "sub1": "local"},
            "reason": "",
        }
        assert "boot-sub1" in got["logs"].splitlines()
        assert READY in got["logs"]
        assert len(got["last"].splitlines()) == 1
        assert "boot-main1" in got["main"].splitlines()  # no host: main1's, as the CLI's
        assert got["exec"] == [3, "sub1\n", "to-stderr\n"]
        assert got["argv"] == "a b main1\n"
        # What Docker has meanwhile: the two containers, with their limits.
        containers, networks = session_objects(got["id"])
        assert len(containers) == 2 and len(networks) == 1
        for info in inspect(*containers):
            assert info["HostConfig"]["NanoCpus"] == 500_000_000
            assert info["HostConfig"]["Memory"] == 256 * MIB
        [listed] = ws.json("ls")
        assert listed["id"] == got["id"] and listed["status"] == "RUNNING"

        out, err = proc.communicate("go\n", timeout=120)
        assert proc.returncode == 0, err
        assert json.loads(out) == {"status": "TERMINATED", "fresh": "TERMINATED"}
        assert "Warning" not in err, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert_no_docker_objects(ws)


async def test_python_api_async_in_a_kernel(ws: Workspace) -> None:
    async with local_kernel(ws) as (_km, kc):
        cell = await ok_cell(
            kc,
            "from jupyter_cluster import ClusterSession\n"
            "s = await ClusterSession.alaunch(size=2, cpu=0.5, mem='256m', bootstrap="
            f"{BOOT!r})\n"
            "print(s.id, ','.join(s.hosts), s.status.value)",
        )
        session_id, hosts, status = cell.stdout.split()
        assert hosts == "main1,sub1" and status == "RUNNING"
        assert len(session_objects(session_id)[0]) == 2

        # Async logs and exec; the sync twins work inside the kernel's running loop too.
        cell = await ok_cell(
            kc,
            "lines = [line async for line in s.alogs('sub1', tail=20)]\n"
            "r = await s.aexec('sub1', 'hostname; echo oops >&2; exit 4')\n"
            "import json\n"
            "print(json.dumps([lines, [r.exit_code, r.stdout, r.stderr],"
            " s.logs('main1', tail=20), s.exec('main1', ['hostname']).stdout]))",
        )
        lines, result, main_log, hostname = json.loads(cell.stdout)
        assert "boot-sub1\n" in lines and f"{READY}\n" in lines
        assert result == [4, "sub1\n", "oops\n"]
        assert "boot-main1" in main_log and hostname == "main1\n"

        # A wrong launch is a ClusterError naming the field; nothing is launched.
        cell = await ok_cell(
            kc,
            "from jupyter_cluster.errors import ClusterError\n"
            "try:\n"
            "    await ClusterSession.alaunch(size=2, mem='lots')\n"
            "except ClusterError as e:\n"
            "    print('refused:', e)",
        )
        assert cell.stdout.startswith("refused: mem:"), cell.stdout

        cell = await ok_cell(
            kc, "ended = await s.aterminate()\nprint(ended.status.value, s.status.value)"
        )
        assert cell.stdout.split() == ["TERMINATED", "TERMINATED"]
        assert session_objects(session_id) == ([], [])
    [record] = ws.json("ls", "--all")
    assert record["id"] == session_id and record["status"] == "TERMINATED"
    assert_no_docker_objects(ws)


# -- 2. the launch form ------------------------------------------------------------------

FORM_STATE = (
    "import json\n"
    "rows = list(form.table.rows.values()) if form.table else []\n"
    "print(json.dumps({'total': form.total.value, 'error': form.error.value,"
    " 'disabled': form.launch_button.disabled, 'progress': form.progress.value,"
    " 'hosts': [row.label.value for row in rows],"
    " 'buttons': [row.logs.description for row in rows]"
    " + ([form.table.terminate_button.description] if form.table else [])}))"
)


async def form_state(kc: AsyncKernelClient) -> dict[str, Any]:
    """The form's total, error, Launch state, progress and hosts table, as the kernel has them."""
    cell = await ok_cell(kc, FORM_STATE)
    state: dict[str, Any] = json.loads(cell.stdout)
    return state


#: Wait (up to 10 s) until the engine's dry run has answered for the form's values.
ANSWERED = (
    "import time\n"
    "for _ in range(200):\n"
    "    if form.room.answer:\n"
    "        break\n"
    "    time.sleep(0.05)\n"
    "print(form.room.answer)"
)


async def answered(kc: AsyncKernelClient) -> str:
    """The engine's answer on room for the form's values, once it came."""
    cell = await ok_cell(kc, ANSWERED)
    return cell.stdout.strip()


async def test_launch_form_through_its_widgets(ws: Workspace) -> None:
    ws.ok_cli("folder", "create", "shared")
    (ws.folders_root / "shared" / "hello.txt").write_text("from the host\n")
    async with local_kernel(ws) as (_km, kc):
        cell = await ok_cell(
            kc, "from jupyter_cluster.widgets import LaunchForm\nform = LaunchForm()"
        )
        assert not cell.stderr
        await ok_cell(
            kc,
            "form.size.value = 2\nform.cpu.value = 0.5\nform.mem.value = '256m'\n"
            f"form.mounts.value = ('shared',)\nform.bootstrap.value = {BOOT!r}",
        )
        state = await form_state(kc)
        assert state["error"] == "" and state["disabled"] is False
        assert state["total"].startswith(
            "Total: 2 × (0.5 CPU, 256m memory, 64m shm) = <b>1 CPU, 512m memory</b>"  # noqa: RUF001
        )
        # The estimate first, then the engine's dry run in its place.
        assert state["total"].endswith(
            ("; fits on agent local now", "; would start now on local: main1, sub1")
        ), state
        assert await answered(kc) == "would start now on local: main1, sub1"
        assert (await form_state(kc))["total"].endswith("; would start now on local: main1, sub1")

        # More than the agent has: the estimate says it would wait; the engine, which
        # knows that no agent could ever hold it, says it would be refused. The form
        # still lets you try.
        await ok_cell(
            kc,
            "free = form.agents[0]['free']['cpu']\nform.size.value = int(free / 0.5) + 1",
        )
        state = await form_state(kc)
        said = await answered(kc)
        assert said.startswith("would be refused: size: no agent of group 'default' can ever"), said
        assert state["disabled"] is False

        # A wrong memory size: the error is shown in the form, Launch is disabled, no traceback.
        cell = await ok_cell(kc, "form.size.value = 2\nform.mem.value = 'lots'")
        assert not cell.stderr and not cell.errors
        state = await form_state(kc)
        assert state["disabled"] is True and state["total"] == ""
        assert "mem: &#x27;lots&#x27; is not a size" in state["error"]
        await ok_cell(kc, "form.mem.value = '256m'")
        assert (await form_state(kc))["disabled"] is False

        # Launch through the button's handler; it returns when the session runs.
        cell = await ok_cell(kc, "form.launch_button.click()\nprint(form.session.id)")
        session_id = cell.stdout.strip()
        [listed] = ws.json("ls")
        assert listed["id"] == session_id and listed["status"] == "RUNNING"
        assert listed["size"] == 2 and listed["mounts"] == ["shared"]
        assert listed["resources"]["cpu"] == 0.5
        assert ws.sh(session_id, "sub1", "cat /home/work/shared/hello.txt") == "from the host\n"

        state = await form_state(kc)
        assert "RUNNING<br>main1: RUNNING sub1: RUNNING" in state["progress"]
        assert state["hosts"] == [
            "<code>main1</code> main on local: RUNNING",
            "<code>sub1</code> sub on local: RUNNING",
        ]
        assert state["buttons"] == ["logs", "logs", "Terminate"]

        # The logs button of sub1 shows its log below the form.
        cell = await ok_cell(
            kc,
            "form.table.rows['sub1'].logs.click()\nprint(form.log_output.outputs[0]['text'])",
        )
        assert cell.stdout.startswith("--- sub1 ---\n")
        assert "boot-sub1" in cell.stdout.splitlines()

        # Terminate through its button: the session ends, the table goes.
        await ok_cell(kc, "form.table.terminate_button.click()")
        state = await form_state(kc)
        assert "TERMINATED" in state["progress"] and state["hosts"] == []
        assert state["disabled"] is False
        assert session_objects(session_id) == ([], [])
    [record] = ws.json("ls", "--all")
    assert record["status"] == "TERMINATED"
    assert_no_docker_objects(ws)


def test_launch_form_notebook_runs(ws: Workspace) -> None:
    executed = execute_notebook(ws, "launch_form.ipynb", timeout=180)
    views = [
        o["data"]
        for o in executed.outputs
        if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
    ]
    assert views, "the notebook shows no widget"
    assert "'size': 2" in executed.text and "'mem': '256m'" in executed.text
    assert "Launch disabled: True\nLaunch disabled: False\n" in executed.text
    assert "nothing launched yet" in executed.text
    assert ws.json("ls", "--all") == []
    assert_no_docker_objects(ws)


# -- 3. the %cluster magic ---------------------------------------------------------------


async def test_incluster_magic_in_a_cluster_kernel(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = ws.install_kernelspec(monkeypatch, "itest-magic", *SIZE3_FLAGS, "--bootstrap", BOOT)
    async with kernel(name) as (km, kc):
        session_id = km.provisioner.session_id  # type: ignore[union-attr]
        cell = await ok_cell(kc, "%cluster logs sub1")
        assert "boot-sub1" in cell.stdout.splitlines() and not cell.stderr
        cli = ws.ok_cli("logs", session_id, "sub1").stdout
        assert stable_prefix(cell.stdout) == stable_prefix(cli)

        cell = await ok_cell(kc, "%cluster logs sub2 --tail 1")
        assert len(cell.stdout.splitlines()) == 1
        cell = await ok_cell(kc, "%cluster logs")  # no HOST: main1's, as the CLI's
        assert "boot-main1" in cell.stdout.splitlines() and "boot-sub1" not in cell.stdout

        cell = await ok_cell(kc, "%cluster hosts")
        assert cell.stdout.splitlines() == [
            "HOST   ROLE  STATUS",
            "main1  main  up",
            "sub1   sub   up",
            "sub2   sub   up",
        ]
        cell = await ok_cell(kc, "%cluster exec sub2 -- hostname")
        assert cell.stdout == "sub2\n" and not cell.stderr
        for line in ("%cluster exec -- hostname", "%cluster exec hostname"):
            cell = await ok_cell(kc, line)  # no HOST: main1
            assert cell.stdout == "main1\n" and not cell.stderr, line
        cell = await ok_cell(kc, "%cluster exec sub1 -- 'echo $BACKENDAI_CLUSTER_HOST | rev'")
        assert cell.stdout == "1bus\n" and not cell.stderr  # one word: a shell command line
        cell = await ok_cell(
            kc, "%cluster exec sub1 -- sh -c 'echo $BACKENDAI_CLUSTER_IDX; exit 5'"
        )
        assert cell.stdout == "1\n" and cell.stderr == "%cluster: exit code 5\n"
        cell = await ok_cell(kc, "%cluster status")
        assert cell.stdout == f"session {session_id} (single-node, size 3): all 3 containers up\n"
        cell = await ok_cell(kc, "%cluster exec --all -- sh -c 'hostname; [ $(hostname) != sub1 ]'")
        assert sorted(cell.stdout.splitlines()) == ["main1: main1", "sub1:  sub1", "sub2:  sub2"]
        assert cell.stderr == "%cluster: exit code 1\n"

        # Wrong lines: one error line (usage may follow), never a traceback.
        for line, first in [
            ("%cluster logs sub9", "%cluster: no host 'sub9' in this session; hosts: "),
            ("%cluster frobnicate", "%cluster: argument command: invalid choice: 'frobnicate'"),
            ("%cluster exec sub1", "%cluster: give a command: %cluster exec [HOST] -- CMD"),
            ("%cluster exec mian1 -- ls", "%cluster: no host 'mian1' in this session; hosts: "),
        ]:
            await refused_line(kc, line, first)
        cell = await run_cell(kc, "%cluster logs sub9")
        assert len(cell.stderr.splitlines()) == 1
    assert_no_docker_objects(ws)


async def test_host_magic_in_a_local_kernel(ws: Workspace) -> None:
    session = ws.launch("--size", "2", "--cpu", "0.5", "--mem", "256m", "--name", "magic",
                        "--bootstrap", BOOT)  # fmt: skip
    session_id = session["id"]
    async with local_kernel(ws) as (_km, kc):
        await ok_cell(kc, "%load_ext jupyter_cluster")
        cell = await ok_cell(kc, "%cluster ls")
        assert session_id[:8] in cell.stdout and "magic" in cell.stdout
        assert "RUNNING" in cell.stdout

        cell = await ok_cell(kc, "%cluster logs magic sub1")
        assert "boot-sub1" in cell.stdout.splitlines()
        assert stable_prefix(cell.stdout) == stable_prefix(
            ws.ok_cli("logs", "magic", "sub1").stdout
        )
        cell = await ok_cell(kc, "%cluster logs magic main1 --tail 1")
        assert len(cell.stdout.splitlines()) == 1
        unnamed = (await ok_cell(kc, "%cluster logs magic")).stdout.splitlines()  # main1's
        assert "boot-main1" in unnamed and "boot-sub1" not in unnamed, unnamed

        cell = await ok_cell(kc, "%cluster exec magic sub1 -- hostname")
        assert cell.stdout == "sub1\n"
        cell = await ok_cell(kc, "%cluster exec magic -- sh -c 'hostname'")  # main1
        assert cell.stdout == "main1\n"
        cell = await ok_cell(kc, "%cluster top magic")
        rows = cell.stdout.splitlines()
        assert rows[0].split()[:3] == ["HOST", "CPU", "MEM"], rows
        assert [r.split()[0] for r in rows[1:]] == ["main1", "sub1"] and "/ 256m" in rows[1]
        cell = await ok_cell(kc, "%cluster exec magic --all -- hostname")
        assert cell.stdout.splitlines() == ["main1: main1", "sub1:  sub1"]  # aligned
        cell = await ok_cell(kc, "%cluster show magic")
        assert session_id in cell.stdout

        for line, first in [
            ("%cluster logs nosuch main1", "%cluster: "),
            ("%cluster logs magic sub7", "%cluster: "),
            ("%cluster frobnicate", "%cluster: argument command: invalid choice"),
        ]:
            await refused_line(kc, line, first)
        cell = await run_cell(kc, "%cluster logs nosuch main1")
        assert len(cell.stderr.splitlines()) == 1 and "nosuch" in cell.stderr, str(cell)

        cell = await ok_cell(kc, f"%cluster rm {session_id[:8]}")
        assert cell.stdout == f"magic {session_id}: TERMINATED\n"
        assert session_objects(session_id) == ([], [])
        cell = await ok_cell(kc, "%cluster ls")
        assert session_id[:8] not in cell.stdout
    assert_no_docker_objects(ws)


# -- 4. the example notebooks ----------------------------------------------------------


def test_environment_tour_and_ssh_notebooks(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    name = kernel_name_of("environment_tour.ipynb")
    assert kernel_name_of("ssh_between_containers.ipynb") == name
    ws.install_kernelspec(monkeypatch, name, *SIZE3_FLAGS)

    tour = execute_notebook(ws, "environment_tour.ipynb")
    text = tour.text
    assert "BACKENDAI_CLUSTER_HOSTS       main1,sub1,sub2" in text
    assert "main1: all 14 variables match the table" in text
    for host in ("sub1", "sub2"):
        assert f"BACKENDAI_CLUSTER_HOST={host}" in text
        assert f"{host}: all 14 variables match the table" in text

    ssh = execute_notebook(ws, "ssh_between_containers.ipynb")
    assert "main1 -> sub2: sub2" in ssh.text and "sub2 -> sub1: sub1" in ssh.text
    assert "Host key verification failed" in ssh.text

    # Both kernels were shut down by jupyter execute: their sessions ended.
    records = ws.json("ls", "--all")
    assert [r["status"] for r in records] == ["TERMINATED", "TERMINATED"]
    assert_no_docker_objects(ws)


def test_mpi_allreduce_notebook(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    # Built FROM the kernel image; Docker's layer cache makes this about a second once
    # the image exists (the first build, apt-get included, takes ~15-60 s).
    started = time.monotonic()
    docker("build", "-t", MPI_IMAGE, str(EXAMPLES_MPI), timeout=600)
    build_seconds = time.monotonic() - started
    name = kernel_name_of("mpi_allreduce.ipynb")
    ws.install_kernelspec(
        monkeypatch, name, "--image", MPI_IMAGE, "--size", "3", "--cpu", "0.5", "--mem", "512m"
    )
    executed = execute_notebook(ws, "mpi_allreduce.ipynb")
    text = executed.text
    for rank, host in enumerate(HOSTS):
        assert f"rank {rank} of 3 on {host} (BACKENDAI_CLUSTER_HOST={host})" in text, text
    assert "allreduce: sum of rank+1 over 3 ranks = 6" in text
    [record] = ws.json("ls", "--all")
    assert record["status"] == "TERMINATED" and record["image"] == MPI_IMAGE
    assert not ws.docker_objects()[0]
    assert_no_docker_objects(ws)
    print(f"docker build of {MPI_IMAGE}: {build_seconds:.1f} s")
