"""Every container of a session is confined the same way (c.ContainerHardening).

Checked from inside the containers and with ``docker inspect`` as an independent
witness: a PIDs limit that stops a fork bomb at the limit (the container keeps
working), every capability dropped but the kept ones, no-new-privileges, rotated
logs, GPUs hidden when none were asked for; and resource numbers that are not real
limits are refused before anything is created.
"""

from __future__ import annotations

import time

import pytest

from jupyter_cluster.engine.agents.base import KEPT_CAPABILITIES
from tests.support.constants import SMALL_FLAGS
from tests.support.docker import inspect, session_objects

from .support import Workspace

pytestmark = pytest.mark.docker
#: Linux capability numbers of the kept ones (capabilities(7)).
CAP_BITS = {
    "CHOWN": 0,
    "DAC_OVERRIDE": 1,
    "FOWNER": 3,
    "KILL": 5,
    "SETGID": 6,
    "SETUID": 7,
    "SYS_CHROOT": 18,
    "AUDIT_WRITE": 29,
}


def test_every_container_is_confined_alike(ws: Workspace) -> None:
    ws.write_config("c.ContainerHardening.pids_limit = 64\n")
    session = ws.launch("--size", "2", *SMALL_FLAGS, "--name", "tight")
    containers, _ = session_objects(session["id"])
    configs = [d["HostConfig"] for d in inspect(*containers)]
    for host_config in configs:
        assert host_config["PidsLimit"] == 64
        assert host_config["CapDrop"] == ["ALL"]
        assert sorted(host_config["CapAdd"]) == sorted(KEPT_CAPABILITIES)
        assert host_config["SecurityOpt"] == ["no-new-privileges"]
        assert host_config["Privileged"] is False
        assert host_config["LogConfig"] == {
            "Type": "json-file",
            "Config": {"max-size": "20m", "max-file": "3"},
        }
        assert not any("docker.sock" in b for b in host_config.get("Binds") or [])
    envs = [d["Config"]["Env"] for d in inspect(*containers)]
    assert all("NVIDIA_VISIBLE_DEVICES=void" in env for env in envs)

    for host in ("main1", "sub1"):
        status = ws.sh("tight", host, "grep -E '^(NoNewPrivs|CapBnd)' /proc/1/status")
        fields = dict(line.split(":\t") for line in status.strip().splitlines())
        assert fields["NoNewPrivs"] == "1"
        assert int(fields["CapBnd"], 16) == sum(1 << bit for bit in CAP_BITS.values())

    # Fork until the limit (a fork bomb that stops by itself after 4 s).
    bomb = (
        "import os, time\n"
        "n = 0\n"
        "try:\n"
        "    while n < 200:\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(4)\n"
        "            os._exit(0)\n"
        "        n += 1\n"
        "except OSError:\n"
        "    pass\n"
        "d = '/sys/fs/cgroup/' + ('' if os.path.exists('/sys/fs/cgroup/pids.max') else 'pids/')\n"
        "print(n, open(d + 'pids.max').read().strip())\n"
    )
    out = ws.exec("tight", "sub1", "python3", "-c", bomb)
    assert len(out.stdout.split()) == 2, str(out)
    forked, most = out.stdout.split()
    assert most == "64" and 40 <= int(forked) < 64, str(out)
    time.sleep(5)  # the sleeps end; the container and SSH into it still work
    assert ws.exec("tight", "main1", "ssh", "sub1", "hostname").stdout == "sub1\n"
    ws.ok_cli("rm", "tight")


@pytest.mark.parametrize(
    ("flags", "field"),
    [
        (("--cpu", "4e-10"), "cpu"),
        (("--cpu", "0.001"), "cpu"),
        (("--mem", "1m"), "mem"),
        (("--cpu", "inf"), "cpu"),
        (("--name", "bad\n"), "name"),
    ],
)
def test_numbers_that_would_not_be_limits_are_refused(
    ws: Workspace, flags: tuple[str, str], field: str
) -> None:
    result = ws.cli("launch", *flags, "--no-wait")
    assert result.returncode == 2 and f"{field}:" in result.stderr, str(result)
    assert ws.docker_objects() == ([], [])
    assert ws.json("ls", "--all") == []
