"""Session processes run as the configured ``work_uid`` (issue #23, X3), on real Docker.

With ``c.ContainerHardening.work_uid`` set to the shared service's uid (one no host
account has): every container's ``work`` has that uid, in ``exec``, over SSH
between containers and in the kernel, a file written into a data folder belongs
to it on the host, and the SSH keys sshd accepts are root's file, which code
running as work cannot change. With ``reserved_work_uid``, a uid a host account
holds stops the engine, and the shared service, from starting, saying which account.
"""

from __future__ import annotations

import os
import pwd
import subprocess

import pytest

from jupyter_cluster.core.uids import TEAM_WORK_UID
from tests.support.constants import CLI, SMALL_FLAGS
from tests.support.kernels import kernel_running, ok_cell
from tests.support.processes import free_port

from .support import Workspace

pytestmark = pytest.mark.docker
UID = str(TEAM_WORK_UID)


def test_every_process_of_a_session_runs_as_work_uid(ws: Workspace) -> None:
    ws.write_config(f"c.ContainerHardening.work_uid = {TEAM_WORK_UID}\n")
    ws.ok_cli("folder", "create", "d")
    assert os.stat(ws.folders_root / "d").st_uid == TEAM_WORK_UID
    ws.launch("--size", "2", *SMALL_FLAGS, "--mount", "d", "--name", "uid")
    for host in ("main1", "sub1"):
        assert ws.exec("uid", host, "id", "-u").stdout == f"{UID}\n"
        assert ws.exec("uid", host, "id", "-g").stdout == f"{UID}\n"
    assert ws.exec("uid", "main1", "ssh", "sub1", "id -un; id -u").stdout == f"work\n{UID}\n"
    ws.exec("uid", "sub1", "sh", "-c", "echo hi > /home/work/d/from-sub1")
    assert os.stat(ws.folders_root / "d" / "from-sub1").st_uid == TEAM_WORK_UID
    # work cannot add a key that sshd would accept
    tamper = ws.exec("uid", "main1", "sh", "-c", "echo x >> /opt/jupyter-cluster/authorized_keys")
    assert tamper.returncode != 0
    owner = ws.exec("uid", "main1", "stat", "-c", "%U %a", "/opt/jupyter-cluster/authorized_keys")
    assert owner.stdout == "root 644\n"
    ws.ok_cli("rm", "uid")


async def test_the_kernel_runs_as_work_uid(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    ws.write_config(f"c.ContainerHardening.work_uid = {TEAM_WORK_UID}\n")
    name = ws.install_kernelspec(monkeypatch, "itest-uid", *SMALL_FLAGS)
    async with kernel_running(name) as kc:
        cell = await ok_cell(kc, "import os; print(os.getuid(), os.getgid())")
    assert cell.stdout == f"{UID} {UID}\n"


def test_a_work_uid_held_by_a_host_account_stops_the_engine(ws: Workspace) -> None:
    account = pwd.getpwnam("nobody")  # every Debian host has it
    ws.write_config(
        f"c.ContainerHardening.work_uid = {account.pw_uid}\n"
        "c.ContainerHardening.reserved_work_uid = True\n"
    )
    result = ws.cli("ls")
    assert result.returncode == 1
    said = f"work_uid {account.pw_uid} belongs to the host account 'nobody'"
    assert said in result.stderr
    ws.write_config(
        f"c.ContainerHardening.work_uid = {TEAM_WORK_UID}\n"
        "c.ContainerHardening.reserved_work_uid = True\n"
    )
    assert ws.cli("ls").returncode == 0  # a free uid: no complaint


def test_the_shared_service_refuses_to_start_with_a_held_work_uid(ws: Workspace) -> None:
    """``jupyter cluster serve`` (reserved_work_uid on) given nobody's uid: it exits
    before listening, naming the account."""
    account = pwd.getpwnam("nobody")
    env = {
        **ws.env,
        "JUPYTERHUB_API_TOKEN": "unused",
        "JUPYTERHUB_API_URL": "http://127.0.0.1:9/hub/api",
        "JUPYTERHUB_SERVICE_NAME": "cluster",
        "JUPYTER_CLUSTER_SERVE_URL": f"http://127.0.0.1:{free_port()}/services/cluster/",
    }
    argv = [*CLI, "serve", f"--ContainerHardening.work_uid={account.pw_uid}"]
    argv += [f"--ClusterManager.db_path={ws.root / 'service.db'}"]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done
    assert f"work_uid {account.pw_uid} belongs to the host account 'nobody'" in done.stderr
