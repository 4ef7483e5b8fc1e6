"""Launch variables (``--env KEY=VALUE``) on real Docker: every container has them,
in the bootstrap command, ``exec``, over SSH between containers (main1 to sub1 and
back), in the kernel and on a warm set; ``show``/``ls`` and the container logs name
them only, and the kernelspec command refuses a reserved name before writing anything.
"""

from __future__ import annotations

import pytest

from tests.support.constants import SMALL_FLAGS
from tests.support.kernels import kernel_running, ok_cell

from .support import Workspace
from .test_warm_pool import SHAPE, run

pytestmark = pytest.mark.docker
SECRET = "tok-7d2e-launch-env"
#: A value with what a shell or an env file could mangle: spaces, quotes, '=', '$', '#'.
ODD = "a b='c' \"d\" e=f $HOME #g"


def test_every_container_exec_and_ssh_session_has_the_variables(ws: Workspace) -> None:
    flags = ("--env", f"MY_TOKEN={SECRET}", "--env", f"ODD={ODD}", "--name", "envs")
    flags += ("--bootstrap", 'printenv MY_TOKEN > "$HOME/at-bootstrap"')
    launched = ws.launch("--size", "2", *SMALL_FLAGS, *flags)
    assert launched["env"] == ["MY_TOKEN", "ODD"]
    for host in ("main1", "sub1"):
        assert ws.exec("envs", host, "printenv", "MY_TOKEN").stdout == f"{SECRET}\n"
        assert ws.exec("envs", host, "printenv", "ODD").stdout == f"{ODD}\n"
        assert ws.exec("envs", host, "printenv", "BACKENDAI_CLUSTER_HOST").stdout == f"{host}\n"
        assert ws.exec("envs", host, "cat", "at-bootstrap").stdout == f"{SECRET}\n"
    over_ssh = ws.sh("envs", "main1", "ssh sub1 'printenv MY_TOKEN; printenv ODD; hostname'")
    assert over_ssh == f"{SECRET}\n{ODD}\nsub1\n"
    back = ws.sh("envs", "sub1", "ssh main1 printenv MY_TOKEN")
    assert back == f"{SECRET}\n"
    assert ws.sh("envs", "main1", "printenv PATH") == "/usr/local/sbin:/usr/local/bin:" + (
        "/usr/sbin:/usr/bin:/sbin:/bin\n"
    )

    shown = ws.ok_cli("show", "envs").stdout
    assert "env       MY_TOKEN, ODD" in shown and SECRET not in shown
    listed = ws.ok_cli("ls", "--json").stdout + ws.ok_cli("ls").stdout
    assert "MY_TOKEN" in listed and SECRET not in listed
    for host in ("main1", "sub1"):
        assert SECRET not in ws.ok_cli("logs", "envs", host).stdout
    ws.ok_cli("rm", "envs")
    assert SECRET not in ws.ok_cli("ls", "--all", "--json").stdout


def test_reserved_names_are_refused_by_launch_and_kernelspec_install(ws: Workspace) -> None:
    for command in (("launch",), ("kernelspec", "install", "bad", "--prefix", str(ws.root))):
        result = ws.cli(*command, *SMALL_FLAGS, "--env", f"BACKENDAI_CLUSTER_HOST={SECRET}")
        assert result.returncode == 2, str(result)
        assert "env: BACKENDAI_CLUSTER_HOST is set by jupyter-cluster itself" in result.stderr
        assert SECRET not in result.stderr + result.stdout
    assert ws.json("ls", "--all") == []
    assert not (ws.root / "share").exists()


def test_an_allowed_path_is_the_users(ws: Workspace) -> None:
    ws.write_config("c.ClusterManager.allowed_env_names = ['PATH']\n")
    ws.launch(*SMALL_FLAGS, "--env", "PATH=/opt/mine/bin:/usr/bin:/bin", "--name", "path")
    assert ws.sh("path", "main1", "echo $PATH") == "/opt/mine/bin:/usr/bin:/bin\n"
    ws.ok_cli("rm", "path")


async def test_the_kernel_has_the_variables(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    name = ws.install_kernelspec(
        monkeypatch, "itest-env", *SMALL_FLAGS, "--env", f"MY_TOKEN={SECRET}", "--env", "B=2"
    )
    async with kernel_running(name) as kc:
        code = (
            "import os; print(os.environ['MY_TOKEN'], os.environ['B'], 'PYTHONPATH' in os.environ)"
        )
        cell = await ok_cell(kc, code)
        assert cell.stdout == f"{SECRET} 2 True\n"
        cell = await ok_cell(
            kc, "import subprocess; print(subprocess.getoutput('ssh main1 printenv B'))"
        )
        assert cell.stdout == "2\n"


async def test_a_warm_set_takes_the_launchs_variables(ws: Workspace) -> None:
    manager = ws.manager(warm_pool=[SHAPE])
    try:
        await manager.start()
        assert await manager.warm.fill() == 1
        spec = manager.make_spec(size=2, cpu=0.25, mem="256m", env={"MY_TOKEN": SECRET})
        session = await manager.launch(spec)
        assert session.network.startswith("jc-warm-")  # it did take the warm set
        assert await run(manager, session, "sub1", "printenv MY_TOKEN") == SECRET
        assert await run(manager, session, "main1", "ssh sub1 printenv MY_TOKEN") == SECRET
        mode = await run(manager, session, "main1", "stat -L -c '%a %U' ~/.ssh/environment")
        assert mode == "600 work"
        await manager.terminate(session.id)
        await manager.warm.drain()
    finally:
        await manager.close()
