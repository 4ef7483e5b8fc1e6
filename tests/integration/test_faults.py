"""Faults of running sessions on real Docker: main1 dies under its kernel, a data folder fills up.

- ``docker kill`` of main1 under a kernel started through the kernel provisioner
  (a real AsyncKernelManager): the kernel is reported dead at once, the session
  shows RUNNING_DEGRADED, a restart fails with an error naming main1 (the
  containers are never re-created behind the user's back), and shutting the kernel
  down still removes everything.
- A data folder on a full file system (a small tmpfs mounted over the folder's host
  directory, as root): the writer gets ENOSPC, the session stays RUNNING and every
  container keeps working, reading the folder included.

Every test ends with nothing of its session left: no container, network or key
material, and no kernel (the ``ws`` workspace fails the test on leaked Docker objects).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator
from typing import Any

import pytest
from jupyter_client.manager import AsyncKernelManager

from jupyter_cluster.errors import ClusterError
from jupyter_cluster.provisioning.provisioner import ClusterProvisioner
from tests.support.constants import LABEL_HOST
from tests.support.docker import docker, inspect, running_hosts, session_objects
from tests.support.kernels import json_of, start_client
from tests.support.processes import run

from .support import Workspace

pytestmark = pytest.mark.docker

#: Small containers, as CLI flags.
SMALL = ("--cpu", "0.5", "--mem", "512m")
#: The size of the file system put under the data folder.
TMPFS_SIZE = "8m"
#: The data folder that the tests fill up.
FOLDER = "scratch"


def container_of(session_id: str, host: str) -> str:
    """The id of ``host``'s container in the session, per Docker (by its labels)."""
    containers, _ = session_objects(session_id)
    ids = [c["Id"] for c in inspect(*containers) if c["Config"]["Labels"][LABEL_HOST] == host]
    assert len(ids) == 1, f"Docker has {len(ids)} containers for {host} of {session_id}"
    return ids[0]


def cluster_provisioner(km: AsyncKernelManager) -> ClusterProvisioner:
    """The kernel manager's provisioner, which must be jupyter-cluster's."""
    provisioner = km.provisioner
    assert isinstance(provisioner, ClusterProvisioner), provisioner
    return provisioner


def kernel_processes(kernel_id: str) -> list[int]:
    """Pids of this machine's processes (those in containers included) whose command
    line names the kernel's connection file: the kernel itself, independently of the code."""
    marker = f"kernel-{kernel_id}.json".encode()
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if marker in f.read():
                    pids.append(int(pid))
        except OSError:  # it just ended
            continue
    return pids


def assert_all_gone(ws: Workspace, session_id: str) -> dict[str, Any]:
    """No container, network or key of the session is left; its history record."""
    assert session_objects(session_id) == ([], [])
    store = ws.store()
    try:
        assert store.load_keys(session_id) is None, "the session's keys are still in the store"
    finally:
        store.close()
    [record] = [s for s in ws.json("ls", "--all") if s["id"] == session_id]
    return record


# -- main1 dies under its kernel ----------------------------------------------------------


async def test_a_killed_main1_ends_the_kernel_and_restart_fails_clearly(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = ws.install_kernelspec(monkeypatch, "fault-c2", "--size", "2", *SMALL)
    km = AsyncKernelManager(kernel_name=name)
    kc = await start_client(km)
    provisioner = cluster_provisioner(km)
    session_id = provisioner.session_id
    assert session_id is not None
    try:
        assert await json_of(kc, "os.environ['BACKENDAI_CLUSTER_HOST']") == "main1"
        assert kernel_processes(km.kernel_id), "the kernel's process is not seen on this machine"

        docker("kill", container_of(session_id, "main1"))
        killed = time.monotonic()
        while await km.is_alive():
            assert time.monotonic() - killed < 5, "the kernel still looks alive after 5 s"
            await asyncio.sleep(0.05)
        assert running_hosts(session_id) == {"main1": False, "sub1": True}
        assert kernel_processes(km.kernel_id) == []
        shown = ws.show(session_id)  # the CLI reconciles with Docker first
        assert shown["status"] == "RUNNING_DEGRADED", shown
        assert shown["status_reason"].startswith(
            "main1 was killed by signal 9 (exit code 137) at "
        ), shown

        # Restart replaces only the kernel process: with main1 gone it fails at once,
        # saying so, and re-creates nothing.
        began = time.monotonic()
        with pytest.raises(ClusterError) as failed:
            await asyncio.wait_for(km.restart_kernel(), 30)
        assert str(failed.value) == (
            f"main1 of cluster session {shown['name']} exited with code 137, so its kernel"
            " cannot be restarted; shut the kernel down (that ends the session) and start a"
            " new one"
        )
        assert time.monotonic() - began < 10
        assert not km.has_kernel and not await km.is_alive()
        assert running_hosts(session_id) == {"main1": False, "sub1": True}
    finally:
        kc.stop_channels()
        await km.shutdown_kernel(now=True)

    assert assert_all_gone(ws, session_id)["status"] == "TERMINATED"
    assert provisioner.session_id is None  # it let go of the session
    assert not os.path.exists(km.connection_file), "the connection file was left behind"
    assert kernel_processes(km.kernel_id) == []


# -- a full data folder -------------------------------------------------------------------


@pytest.fixture
def full_folder(ws: Workspace) -> Iterator[str]:
    """Data folder :data:`FOLDER` on a tmpfs of :data:`TMPFS_SIZE` (mounting needs root,
    as CI has: this fails, never skips, without it); unmounted at the end."""
    ws.ok_cli("folder", "create", FOLDER)
    path = ws.folders_root / FOLDER
    options = f"size={TMPFS_SIZE},uid=1000,gid=1000,mode=0755"
    mounted = run(("mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)), timeout=30)
    if mounted.returncode != 0:
        pytest.fail(f"could not mount a tmpfs over a data folder (run as root):\n{mounted}")
    try:
        yield FOLDER
    finally:
        unmounted = run(("umount", str(path)), timeout=30)
        if unmounted.returncode != 0:
            unmounted = run(("umount", "--lazy", str(path)), timeout=30)
        assert unmounted.returncode == 0, str(unmounted)


def test_a_full_data_folder_fails_the_writer_and_nothing_else(
    ws: Workspace, full_folder: str
) -> None:
    sid = ws.launch("--size", "2", *SMALL, "--mount", full_folder)["id"]
    folder = f"/home/work/{full_folder}"
    ws.sh(sid, "main1", f"echo written before > {folder}/note.txt")

    filled = ws.exec(sid, "main1", "sh", "-c", f"cat /dev/zero > {folder}/fill")
    assert filled.returncode != 0, str(filled)
    assert "No space left on device" in filled.stderr, str(filled)
    assert os.statvfs(ws.folders_root / full_folder).f_bavail == 0  # full, seen from the host
    refused = ws.exec(sid, "sub1", "sh", "-c", f"head -c 4096 /dev/zero > {folder}/more.bin")
    assert refused.returncode != 0 and "No space left on device" in refused.stderr, str(refused)

    shown = ws.show(sid)
    assert shown["status"] == "RUNNING", shown
    assert [c["status"] for c in shown["containers"]] == ["RUNNING", "RUNNING"]
    assert running_hosts(sid) == {"main1": True, "sub1": True}
    assert ws.sh(sid, "sub1", f"cat {folder}/note.txt; ls {folder}") == (
        "written before\nfill\nmore.bin\nnote.txt\n"
    )
    assert ws.sh(sid, "main1", "ssh sub1 hostname") == "sub1\n"
    assert ws.sh(sid, "main1", "echo elsewhere > ok.txt && cat ok.txt") == "elsewhere\n"
    # Freeing space makes the folder writable again, from any container.
    freed = ws.sh(sid, "sub1", f"rm {folder}/fill && echo again > {folder}/after.txt && echo ok")
    assert freed == "ok\n"

    ws.ok_cli("rm", sid)
    assert assert_all_gone(ws, sid)["status"] == "TERMINATED"
