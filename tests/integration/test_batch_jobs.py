"""Batch sessions and time limits end to end, on the real Docker engine (#25 items 1, 2, 5).

A size-3 batch job gathers a value from every container over SSH (the kernel image
has no MPI), while the CLI that launched it is SIGKILLed right after the launch: the
detached driver runs the job anyway and the session ends by itself with the result,
its logs kept. A job that exits 3 ends failed with code 3 (after its retries, each
try in its history), but is not tried again once a sub was killed under it; a job
past its lifetime ends with the lifetime's reason, as
does an interactive session; ``wait`` exits with the job's code; a driver killed
while the job runs is replaced by ``wait`` without the command running twice.
Every test ends with nothing of the workspace left in Docker (the ``ws`` fixture).
"""

from __future__ import annotations

import asyncio
import os
import signal
import time

import pytest

from jupyter_cluster.core.batch import JobState
from jupyter_cluster.engine.batch import BatchUpkeep
from tests.support.constants import SMALL_FLAGS
from tests.support.docker import docker
from tests.support.processes import alive
from tests.support.waiting import wait_for

from .support import Workspace

pytestmark = pytest.mark.docker

#: Sums every container's local rank and names the hosts, asking each over SSH.
GATHER = (
    "total=0; names=''; "
    'for h in $(cat "$JUPYTER_CLUSTER_HOSTFILE"); do '
    "r=$(ssh -o BatchMode=yes $h 'echo $BACKENDAI_CLUSTER_LOCAL_RANK $(hostname)') || exit 9; "
    'set -- $r; total=$((total + $1)); names="$names $2"; done; '
    'echo "gathered total=$total from$names"'
)


def test_a_size_3_job_outlives_its_killed_cli_and_ends_with_its_result(ws: Workspace) -> None:
    found = ws.launch_then_kill_cli("--size", "3", *SMALL_FLAGS, "--command", GATHER, "--json")
    driver = ws.driver_pid(found.id)
    started = time.monotonic()
    waited = ws.cli("wait", found.id, "--json", timeout=240)
    assert waited.returncode == 0, str(waited)
    print(f"job ended {time.monotonic() - started:.1f} s after the CLI was killed")
    done = ws.show(found.id)
    assert done["status"] == "TERMINATED", done
    assert done["status_reason"] == "batch job succeeded", done
    job = done["job"]
    assert (job["state"], job["exit_code"], len(job["tries"])) == ("succeeded", 0, 1), job
    assert job["duration"] is not None and job["duration"] >= 0
    logs = ws.ok_cli("logs", found.id, "main1").stdout
    assert "gathered total=3 from main1 sub1 sub2" in logs, logs
    assert "jupyter-cluster: batch job try 1 exited with code 0" in logs
    listed = ws.ok_cli("ls", "--all").stdout
    assert "succeeded 0 in" in listed, listed
    wait_for(lambda: not alive(driver), 30, "the driver to exit with its session")


def test_a_failing_job_ends_failed_with_its_code_after_its_retries(ws: Workspace) -> None:
    session = ws.launch(*SMALL_FLAGS, "--retries", "1", "--command", "echo trying; exit 3")
    waited = ws.cli("wait", session["id"], timeout=180)
    assert waited.returncode == 3, str(waited)
    done = ws.show(session["id"])
    assert done["status"] == "TERMINATED"
    assert done["status_reason"] == "batch job failed with exit code 3 after 2 tries", done
    job = done["job"]
    assert job["state"] == "failed" and job["exit_code"] == 3
    assert [(t["number"], t["exit_code"]) for t in job["tries"]] == [(1, 3), (2, 3)], job
    assert ws.ok_cli("logs", session["id"], "main1").stdout.count("trying") == 2


#: Runs while sub1 answers over SSH, then fails: a job that needs its sub.
NEEDS_SUB1 = (
    "echo needing sub1; "
    "while ssh -o BatchMode=yes -o ConnectTimeout=3 sub1 true; do sleep 0.5; done; exit 3"
)


def test_a_job_whose_sub_was_killed_is_not_tried_again(ws: Workspace) -> None:
    session = ws.launch("--size", "2", *SMALL_FLAGS, "--retries", "2", "--command", NEEDS_SUB1)
    sub1 = next(c for c in session["containers"] if c["host"] == "sub1")["container_id"]
    wait_for(
        lambda: "needing sub1" in ws.ok_cli("logs", session["id"], "main1").stdout,
        60,
        "the job's first try to start",
    )
    docker("kill", sub1)  # as the out-of-memory killer or an administrator would
    waited = ws.cli("wait", session["id"], timeout=180)
    assert waited.returncode == 3, str(waited)
    done = ws.show(session["id"])
    assert done["status"] == "TERMINATED", done
    assert done["status_reason"].startswith(
        "batch job failed with exit code 3; not tried again: sub1 was killed by signal 9 "
        "(exit code 137)"
    ), done
    job = done["job"]
    assert job["state"] == "failed" and job["exit_code"] == 3, job
    assert [(t["number"], t["exit_code"]) for t in job["tries"]] == [(1, 3)], job
    logs = ws.ok_cli("logs", session["id"], "main1").stdout
    assert logs.count("needing sub1") == 1 and "batch job try 2" not in logs, logs


def test_a_job_past_its_lifetime_ends_with_the_lifetime_reason(ws: Workspace) -> None:
    session = ws.launch(*SMALL_FLAGS, "--max-lifetime", "5s", "--command", "sleep 300")
    assert session["max_lifetime"] == 5.0
    waited = ws.cli("wait", session["id"], timeout=120)
    assert waited.returncode == 124, str(waited)
    done = ws.show(session["id"])
    assert (done["status"], done["status_reason"]) == (
        "TERMINATED",
        "reached its maximum lifetime of 5s",
    ), done
    assert done["job"]["state"] == "stopped" and done["job"]["exit_code"] is None
    assert done["ended_at"] - done["created_at"] < 30


def test_an_interactive_session_past_its_lifetime_is_ended_by_the_next_command(
    ws: Workspace,
) -> None:
    session = ws.launch(*SMALL_FLAGS, "--max-lifetime", "3s")
    assert session["status"] == "RUNNING" and session["job"] is None
    time.sleep(max(0.0, session["created_at"] + 3.5 - time.time()))
    (listed,) = ws.json("ls", "--all")  # its reconciliation ends it
    assert (listed["status"], listed["status_reason"]) == (
        "TERMINATED",
        "reached its maximum lifetime of 3s",
    ), listed
    assert ws.cli("wait", session["id"]).returncode == 124


def test_a_site_limit_refuses_longer_lifetimes(ws: Workspace) -> None:
    ws.write_config("c.ClusterManager.max_session_lifetime = 3600\n")
    refused = ws.cli("launch", *SMALL_FLAGS, "--max-lifetime", "2h", "--command", "true")
    assert refused.returncode != 0
    assert "max_lifetime: 2h is more than this site allows (1h)" in refused.stderr, str(refused)
    bad = ws.cli("launch", *SMALL_FLAGS, "--max-lifetime", "soon")
    assert bad.returncode != 0 and "max_lifetime: 'soon' is not a duration" in bad.stderr
    assert ws.json("ls", "--all") == []


def test_a_restarted_driver_never_runs_the_command_twice(ws: Workspace) -> None:
    ws.ok_cli("folder", "create", "out")
    command = "echo ran >> ~/out/runs; sleep 8"
    session = ws.launch(*SMALL_FLAGS, "--mount", "out", "--command", command, "--no-wait")
    pid = ws.driver_pid(session["id"])
    assert pid and alive(pid)

    def running() -> bool:
        s = ws.only_session()
        return s is not None and s.job is not None and s.job.state.value == "running"

    wait_for(running, 120, "the job to run")
    time.sleep(1.5)  # the command has started in main1
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not alive(pid), 10, f"the killed driver (pid {pid}) to end")
    waited = ws.cli("wait", session["id"], timeout=120)  # starts a driver again
    assert waited.returncode == 0, str(waited)
    assert ws.driver_pid(session["id"]) != pid
    done = ws.show(session["id"])
    assert done["job"]["state"] == "succeeded" and len(done["job"]["tries"]) == 1, done
    (folder,) = [f for f in ws.json("folder", "ls") if f["name"] == "out"]
    with open(os.path.join(folder["path"], "runs")) as f:
        assert f.read() == "ran\n"


async def test_a_restarted_servers_upkeep_picks_the_job_up_and_never_reruns_it(
    ws: Workspace,
) -> None:
    """What a Jupyter server (or the shared service) keeps going: its batch upkeep
    runs a RUNNING batch session's job; stopped mid-job (a server stop) and started
    again in a new engine (a restart), it watches the same try to its end."""
    ws.ok_cli("folder", "create", "out")
    first = ws.manager(job_poll_interval=0.25)
    await first.start()
    spec = first.make_spec(
        cpu="0.25", mem="256m", mounts=["out"], command="echo ran >> ~/out/runs; sleep 5"
    )
    session = await first.launch(spec)  # RUNNING, its job waiting for a watcher
    (upkeep,) = [u for u in first.upkeep(lambda: None) if isinstance(u, BatchUpkeep)]
    upkeep.start()

    for _ in range(240):  # the upkeep runs on this loop: wait without blocking it
        job = first.store.require(session.id).job
        if job is not None and job.state is JobState.RUNNING:
            break
        await asyncio.sleep(0.25)
    assert job is not None and job.state is JobState.RUNNING, job
    await asyncio.sleep(1.5)
    await upkeep.stop()
    await first.close()

    second = ws.manager(job_poll_interval=0.25)
    await second.start()
    (again,) = [u for u in second.upkeep(lambda: None) if isinstance(u, BatchUpkeep)]
    again.start()
    try:
        for _ in range(240):
            ended = second.store.require(session.id)
            if ended.status.value == "TERMINATED":
                break
            await asyncio.sleep(0.25)
    finally:
        await again.stop()
        await second.close()
    assert ended.status_reason == "batch job succeeded", ended
    assert ended.job is not None and len(ended.job.tries) == 1
    (folder,) = [f for f in ws.json("folder", "ls") if f["name"] == "out"]
    with open(os.path.join(folder["path"], "runs")) as f:
        assert f.read() == "ran\n"
