"""One real size-3 single-node session, checked from every side (issue #2: 3, 4, 6, 7, 8, 13).

The session is launched once for the module through the CLI, with two data
folders (one read-only), 128m of shared memory, a name and a bootstrap command;
the tests look at it with ``docker inspect`` and by running commands in it
through ``jupyter cluster exec`` (and SSH between its containers).
"""

from __future__ import annotations

import json
import re
import socket
import time
from typing import Any

import pytest

from tests.support.constants import (
    HOSTS,
    IMAGE,
    LABEL_HOST,
    LABEL_KERNEL,
    LABEL_MANAGER,
    LABEL_ROLE,
    LABEL_SESSION,
    MIB,
    READY,
)
from tests.support.docker import docker, inspect, session_objects

from .support import Workspace

pytestmark = pytest.mark.docker

NAME = "itest-cluster"
BOOTSTRAP = 'echo "bootstrap ran on $BACKENDAI_CLUSTER_HOST as $(id -u) in $(pwd)"'
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


@pytest.fixture(scope="module")
def session(module_ws: Workspace) -> Any:
    """The shared session (launch --json output); removed after the module."""
    module_ws.ok_cli("folder", "create", "shared")
    module_ws.ok_cli("folder", "create", "ref")
    (module_ws.folders_root / "ref" / "readme.txt").write_text("reference data\n")
    launched = module_ws.launch(
        "--size", "3", "--cpu", "0.5", "--mem", "512m", "--shm", "128m",
        "--mount", "shared", "--mount", "ref:ro", "--name", NAME, "--bootstrap", BOOTSTRAP,
    )  # fmt: skip
    yield launched
    module_ws.ok_cli("rm", launched["id"])
    assert session_objects(launched["id"])[0] == []


@pytest.fixture(scope="module")
def containers(session: Any) -> dict[str, dict[str, Any]]:
    """``docker inspect`` of each container, by host name."""
    ids = [c["container_id"] for c in session["containers"]]
    return {c["host"]: data for c, data in zip(session["containers"], inspect(*ids), strict=True)}


@pytest.fixture(scope="module")
def network(session: Any) -> dict[str, Any]:
    """``docker inspect`` of the session's one network."""
    _, ids = session_objects(session["id"])
    assert len(ids) == 1, f"expected one network labelled with the session id, got {ids}"
    return inspect(ids[0])[0]


def expected_env(session: Any, host: str) -> dict[str, str]:
    """The BACKENDAI_* variables of ``host``: DESIGN.md's ten, and Backend.AI's session
    name, user name, image and pre-opened ports."""
    rank = HOSTS.index(host)
    kernel_id = next(c["kernel_id"] for c in session["containers"] if c["host"] == host)
    return {
        "BACKENDAI_CLUSTER_HOST": host,
        "BACKENDAI_CLUSTER_HOSTS": "main1,sub1,sub2",
        "BACKENDAI_CLUSTER_IDX": "1" if rank == 0 else str(rank),
        "BACKENDAI_CLUSTER_MODE": "single-node",
        "BACKENDAI_CLUSTER_ROLE": "main" if rank == 0 else "sub",
        "BACKENDAI_CLUSTER_SIZE": "3",
        "BACKENDAI_CLUSTER_REPLICAS": "main:1,sub:2",
        "BACKENDAI_CLUSTER_LOCAL_RANK": str(rank),
        "BACKENDAI_KERNEL_ID": kernel_id,
        "BACKENDAI_SESSION_ID": session["id"],
        "BACKENDAI_SESSION_NAME": session["name"],
        "BACKENDAI_USER_NAME": session["owner"],
        "BACKENDAI_KERNEL_IMAGE": session["image"],
        "BACKENDAI_PREOPEN_PORTS": "",
    }


def backendai_env(env_output: str) -> dict[str, str]:
    """The BACKENDAI_* variables out of ``env`` output."""
    pairs = (line.split("=", 1) for line in env_output.splitlines() if "=" in line)
    return {k: v for k, v in pairs if k.startswith("BACKENDAI_")}


# -- the session record (CLI --json) ------------------------------------------------


SESSION_KEYS = {"id", "name", "status", "status_reason", "mode", "size", "image", "resources"}
CONTAINER_KEYS = {"host", "role", "kernel_id", "agent", "status", "container_id"}


def check_session_json(data: Any, session_id: str | None = None) -> None:
    assert isinstance(data, dict)
    assert SESSION_KEYS | {"containers"} <= set(data)
    assert UUID_RE.match(data["id"])
    if session_id:
        assert data["id"] == session_id
    assert data["name"] == NAME
    assert data["status"] == "RUNNING"
    assert data["status_reason"] == ""
    assert data["mode"] == "single-node"
    assert data["size"] == 3
    assert data["image"] == IMAGE
    assert data["resources"]["cpu"] == 0.5
    assert data["resources"]["mem"] == 512 * MIB
    assert data["resources"]["shm"] == 128 * MIB
    assert [c["host"] for c in data["containers"]] == HOSTS
    for c in data["containers"]:
        assert set(c) >= CONTAINER_KEYS
        assert c["role"] == ("main" if c["host"] == "main1" else "sub")
        assert c["agent"] == "local"
        assert c["status"] == "RUNNING"
        assert c["container_id"]
        assert UUID_RE.match(c["kernel_id"])
    assert data["containers"][0]["kernel_id"] == data["id"]
    assert len({c["kernel_id"] for c in data["containers"]}) == 3


def test_launch_json_describes_the_running_session(session: Any) -> None:
    check_session_json(session)


def test_show_finds_the_session_by_id_prefix_and_name(module_ws: Workspace, session: Any) -> None:
    for ref in (session["id"], session["id"][:8], NAME):
        shown = module_ws.show(ref)
        check_session_json(shown, session["id"])
        assert [c["container_id"] for c in shown["containers"]] == [
            c["container_id"] for c in session["containers"]
        ]
    assert module_ws.sh(NAME, "main1", "hostname").strip() == "main1"
    assert module_ws.sh(session["id"][:8], "sub2", "hostname").strip() == "sub2"


def test_ls_and_agents_give_json_lists(module_ws: Workspace, session: Any) -> None:
    listed = module_ws.json("ls")
    assert isinstance(listed, list)
    assert [s["id"] for s in listed] == [session["id"]]
    check_session_json(listed[0], session["id"])
    agents = module_ws.json("agents")
    assert isinstance(agents, list)
    assert [a["id"] for a in agents] == ["local"]
    assert agents[0]["reachable"] is True
    assert agents[0]["allocated"]["cpu"] == pytest.approx(1.5)
    assert agents[0]["allocated"]["mem"] == 3 * 512 * MIB


# -- Docker objects: network, names, labels, limits, ports -----------------------------


def test_one_private_network_per_session(
    session: Any, network: dict[str, Any], containers: dict[str, dict[str, Any]]
) -> None:
    assert network["Driver"] == "bridge"
    assert network["Labels"][LABEL_SESSION] == session["id"]
    attached = {c["Name"] for c in network["Containers"].values()}
    assert attached == {data["Name"].lstrip("/") for data in containers.values()}
    for host, data in containers.items():
        # Only on the session's network: nothing of another session can reach it.
        assert set(data["NetworkSettings"]["Networks"]) == {network["Name"]}, host


def test_containers_hostnames_and_labels(
    module_ws: Workspace, session: Any, containers: dict[str, dict[str, Any]]
) -> None:
    assert list(containers) == HOSTS
    by_host = {c["host"]: c for c in session["containers"]}
    for host, data in containers.items():
        assert data["State"]["Running"], host
        assert data["Config"]["Hostname"] == host
        assert data["Config"]["Image"] == IMAGE
        labels = data["Config"]["Labels"]
        assert labels[LABEL_SESSION] == session["id"]
        assert labels[LABEL_KERNEL] == by_host[host]["kernel_id"]
        assert labels[LABEL_HOST] == host
        assert labels[LABEL_ROLE] == ("main" if host == "main1" else "sub")
        assert labels[LABEL_MANAGER] == module_ws.manager_id
        assert module_ws.sh(session["id"], host, "hostname").strip() == host


def test_identical_limits(containers: dict[str, dict[str, Any]]) -> None:
    for host, data in containers.items():
        hc = data["HostConfig"]
        assert hc["NanoCpus"] == 500_000_000, host
        assert hc["Memory"] == 512 * MIB, host
        assert hc["MemorySwap"] == hc["Memory"], host  # no swap
        assert hc["ShmSize"] == 128 * MIB, host


def test_only_main1_publishes_ports_on_loopback(containers: dict[str, dict[str, Any]]) -> None:
    ports = containers["main1"]["NetworkSettings"]["Ports"]
    bindings = [b for port_bindings in ports.values() if port_bindings for b in port_bindings]
    assert ports.get("2200/tcp"), ports
    assert bindings and all(b["HostIp"] == "127.0.0.1" for b in bindings), bindings
    # main1's SSH server really answers on the published loopback port.
    ssh_port = int(ports["2200/tcp"][0]["HostPort"])
    with socket.create_connection(("127.0.0.1", ssh_port), timeout=10) as conn:
        conn.settimeout(10)
        assert conn.recv(64).startswith(b"SSH-2.0-")
    for host in ("sub1", "sub2"):
        data = containers[host]
        assert not data["HostConfig"].get("PortBindings"), host
        published = data["NetworkSettings"].get("Ports") or {}
        assert all(not b for b in published.values()), (host, published)


# -- inside the containers ---------------------------------------------------------------


def test_every_name_resolves_from_every_container(
    module_ws: Workspace, session: Any, network: dict[str, Any], containers: dict[str, Any]
) -> None:
    net = network["Name"]
    ips = {h: d["NetworkSettings"]["Networks"][net]["IPAddress"] for h, d in containers.items()}
    assert len(set(ips.values())) == 3
    for host in HOSTS:
        out = module_ws.sh(session["id"], host, "getent hosts " + " ".join(HOSTS))
        resolved = {line.split()[1]: line.split()[0] for line in out.splitlines()}
        assert resolved == ips, (host, out)


def test_backendai_env_via_exec(module_ws: Workspace, session: Any) -> None:
    for host in HOSTS:
        result = module_ws.exec(session["id"], host, "env")
        assert result.returncode == 0, str(result)
        assert backendai_env(result.stdout) == expected_env(session, host)


def test_backendai_env_reaches_ssh_sessions(module_ws: Workspace, session: Any) -> None:
    for src, dst in (("main1", "sub1"), ("main1", "sub2"), ("sub1", "main1"), ("sub2", "sub1")):
        out = module_ws.sh(session["id"], src, f"ssh {dst} env")
        assert backendai_env(out) == expected_env(session, dst), (src, dst)


def test_hostfile_lists_every_host(module_ws: Workspace, session: Any) -> None:
    for host in HOSTS:
        assert module_ws.sh(session["id"], host, "cat /home/config/hostfile").split() == HOSTS


def test_processes_run_as_work_in_home(module_ws: Workspace, session: Any) -> None:
    script = 'id -u; id -un; pwd; echo "$HOME"'
    expected = ["1000", "work", "/home/work", "/home/work"]
    for host in HOSTS:
        assert module_ws.sh(session["id"], host, script).split() == expected, host
    out = module_ws.sh(session["id"], "main1", f"ssh sub2 '{script}'")
    assert out.split() == expected


def test_ssh_by_name_with_strict_host_key_checking(module_ws: Workspace, session: Any) -> None:
    sid = session["id"]
    for src in ("main1", "sub1"):
        before = module_ws.sh(sid, src, "md5sum ~/.ssh/known_hosts")
        result = module_ws.exec(sid, src, "ssh", "sub2", "hostname")
        assert result.returncode == 0, str(result)
        assert result.stdout == "sub2\n"
        assert result.stderr == ""  # no "Permanently added" warning: the key was known
        strict = module_ws.exec(
            sid, src, "ssh", "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes",
            "sub2", "hostname",
        )  # fmt: skip
        assert (strict.returncode, strict.stdout) == (0, "sub2\n"), str(strict)
        effective = module_ws.sh(sid, src, "ssh -G sub2").splitlines()
        assert "stricthostkeychecking true" in effective
        assert "port 2200" in effective
        assert "user work" in effective
        # Strict for real: without the prepared known_hosts the host is refused.
        unknown = module_ws.exec(
            sid, src, "ssh", "-o", "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes",
            "sub2", "true",
        )  # fmt: skip
        assert unknown.returncode != 0, str(unknown)
        assert module_ws.sh(sid, src, "md5sum ~/.ssh/known_hosts") == before


def test_keys_private_and_fresh_per_container(module_ws: Workspace, session: Any) -> None:
    sid = session["id"]
    host_keys = set()
    for host in HOSTS:
        out = module_ws.sh(
            sid,
            host,
            "stat -c '%a %U %n' ~/.ssh/id_cluster /opt/jupyter-cluster/authorized_keys "
            "/opt/jupyter-cluster/ssh_host_ed25519_key /home/config/ssh "
            "/home/config/ssh/id_cluster",
        )
        modes = [line.split()[:2] for line in out.splitlines()]
        # the keys sshd accepts are root's: code running as work cannot add one
        expected = [["600", "work"], ["644", "root"], ["600", "root"]]
        assert modes == [*expected, ["700", "work"], ["600", "work"]], (host, out)
        denied = module_ws.exec(sid, host, "cat", "/opt/jupyter-cluster/ssh_host_ed25519_key")
        assert denied.returncode != 0 and "BEGIN" not in denied.stdout
        host_keys.add(module_ws.sh(sid, host, "cat /opt/jupyter-cluster/ssh_host_ed25519_key.pub"))
    assert len(host_keys) == 3  # a fresh host key per container
    # Backend.AI's key path works as its scripts use it.
    backendai = "ssh -i /home/config/ssh/id_cluster sub2 hostname"
    assert module_ws.sh(sid, "main1", backendai).strip() == "sub2"


def test_data_folders_mounted_everywhere(
    module_ws: Workspace, session: Any, containers: dict[str, dict[str, Any]]
) -> None:
    sid = session["id"]
    for host, data in containers.items():
        mounts = {m["Destination"]: m for m in data["Mounts"]}
        assert mounts["/home/work/shared"]["Source"] == str(module_ws.folders_root / "shared")
        assert mounts["/home/work/shared"]["RW"] is True, host
        assert mounts["/home/work/ref"]["Source"] == str(module_ws.folders_root / "ref")
        assert mounts["/home/work/ref"]["RW"] is False, host
    # A file written in sub1 is seen in main1 and sub2 (and on the host).
    module_ws.sh(sid, "sub1", "echo written-in-sub1 > /home/work/shared/from-sub1.txt")
    for host in ("main1", "sub2"):
        assert module_ws.sh(sid, host, "cat shared/from-sub1.txt") == "written-in-sub1\n"
    assert (module_ws.folders_root / "shared" / "from-sub1.txt").read_text() == "written-in-sub1\n"
    # :ro is readable but read-only in every container.
    for host in HOSTS:
        assert module_ws.sh(sid, host, "cat ref/readme.txt") == "reference data\n"
        denied = module_ws.exec(sid, host, "sh", "-c", "echo x > /home/work/ref/new.txt")
        assert denied.returncode != 0, str(denied)
        assert "Read-only file system" in denied.stderr
    assert sorted(p.name for p in (module_ws.folders_root / "ref").iterdir()) == ["readme.txt"]


def test_folder_in_use_cannot_be_removed(module_ws: Workspace, session: Any) -> None:
    result = module_ws.cli("folder", "rm", "shared")
    assert result.returncode == 2, str(result)
    assert NAME in result.stderr and "Traceback" not in result.stderr
    assert (module_ws.folders_root / "shared").is_dir()


# -- exec, logs, bootstrap ----------------------------------------------------------------


def test_exec_passes_output_and_exit_code(module_ws: Workspace, session: Any) -> None:
    result = module_ws.exec(session["id"], "sub1", "sh", "-c", "echo out; echo err >&2; exit 7")
    assert (result.returncode, result.stdout, result.stderr) == (7, "out\n", "err\n")
    passed = module_ws.exec(session["id"], "main1", "ssh", "sub2", "exit 0")
    assert passed.returncode == 0, str(passed)
    bad = module_ws.exec(session["id"], "main1", "ssh", "sub2", "exit 5")
    assert bad.returncode == 5, str(bad)
    # No HOST: main1, as with ssh; a HOST given before -- must name a container.
    main = module_ws.cli("exec", session["id"], "--", "sh", "-c", "hostname; exit 3")
    assert (main.returncode, main.stdout) == (3, "main1\n"), str(main)
    bare = module_ws.cli("exec", session["id"], "hostname")
    assert (bare.returncode, bare.stdout) == (0, "main1\n"), str(bare)
    typo = module_ws.cli("exec", session["id"], "mian1", "--", "hostname")
    assert typo.returncode == 2 and "no host 'mian1'" in typo.stderr, str(typo)
    # One word is a command line for the container's shell, as with ssh and pdsh.
    line = module_ws.cli("exec", session["id"], "sub2", "--", "echo $BACKENDAI_CLUSTER_HOST | rev")
    assert (line.returncode, line.stdout) == (0, "2bus\n"), str(line)
    missing = module_ws.cli("exec", session["id"], "--", "nosuchprogram")
    assert missing.returncode == 127 and "nosuchprogram: not found" in missing.stderr, str(missing)


def test_exec_all_runs_everywhere_with_prefixed_lines_and_the_worst_status(
    module_ws: Workspace, session: Any
) -> None:
    script = (
        'echo "out $BACKENDAI_CLUSTER_HOST"; echo err >&2; '
        '[ "$BACKENDAI_CLUSTER_IDX" != 2 ] || exit 4'
    )
    done = module_ws.cli("exec", session["id"], "--all", "--", "sh", "-c", script)
    assert done.returncode == 4, str(done)  # the worst of 0, 0, 4 (sub2 is idx 2)
    width = max(len(h) for h in HOSTS)
    assert sorted(done.stdout.splitlines()) == sorted(
        f"{(h + ':').ljust(width + 1)} out {h}" for h in HOSTS
    )
    assert sorted(done.stderr.splitlines()) == sorted(
        f"{(h + ':').ljust(width + 1)} err" for h in HOSTS
    )
    assert module_ws.cli("exec", session["id"], "--all", "--", "true").returncode == 0
    hosts = module_ws.cli("exec", session["id"], "--all", "--", "echo $BACKENDAI_CLUSTER_HOST")
    assert sorted(hosts.stdout.split()[1::2]) == sorted(HOSTS), str(hosts)  # one line each
    both = module_ws.cli("exec", session["id"], "--all", "main1", "--", "true")
    assert both.returncode == 2 and "either a HOST or --all" in both.stderr, str(both)
    neither = module_ws.cli("exec", session["id"])
    assert neither.returncode == 2, str(neither)


def test_bootstrap_output_is_in_each_log(module_ws: Workspace, session: Any) -> None:
    unnamed = module_ws.ok_cli("logs", session["id"]).stdout.splitlines()  # main1's
    assert "bootstrap ran on main1 as 1000 in /home/work" in unnamed, unnamed
    for host in HOSTS:
        lines = module_ws.ok_cli("logs", session["id"], host).stdout.splitlines()
        assert READY in lines, (host, lines)
        ran = [line for line in lines if line.startswith("bootstrap ran on")]
        # It ran in this container only, as work (1000) in /home/work, before "ready".
        assert ran == [f"bootstrap ran on {host} as 1000 in /home/work"], (host, lines)
        assert lines.index(ran[0]) < lines.index(READY)


def test_logs_tail(module_ws: Workspace, session: Any) -> None:
    def logs(*extra: str) -> list[str]:
        return module_ws.ok_cli("logs", session["id"], "sub2", *extra).stdout.splitlines()

    for n in (1, 2):
        for _ in range(10):  # sshd may still be logging an earlier test's disconnect
            before, tail, after = logs(), logs("--tail", str(n)), logs()
            if before == after:
                break
        assert len(after) >= 3 and READY in after
        assert tail == after[-n:]


def test_unknown_host_exits_2(module_ws: Workspace, session: Any) -> None:
    before = module_ws.docker_objects()
    for args in (
        ("exec", session["id"], "sub9", "--", "true"),
        ("logs", session["id"], "nohost"),
    ):
        result = module_ws.cli(*args)
        assert result.returncode == 2, str(result)
        assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr
        assert "main1, sub1, sub2" in result.stderr
    assert module_ws.docker_objects() == before


def test_name_of_an_active_session_cannot_be_reused(module_ws: Workspace, session: Any) -> None:
    before = module_ws.docker_objects()
    result = module_ws.cli("launch", "--cpu", "0.25", "--mem", "256m", "--name", NAME)
    assert result.returncode == 2, str(result)
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr
    assert module_ws.docker_objects() == before
    assert [s["id"] for s in module_ws.json("ls", "--all")] == [session["id"]]


def _docker_stats(container_id: str) -> dict[str, Any]:
    out = docker("stats", "--no-stream", "--format", "{{json .}}", container_id).stdout
    return dict(json.loads(out))


def _bytes(text: str) -> float:
    """``docker stats``' "100.5MiB" as bytes."""
    units = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "kB": 1e3, "MB": 1e6, "GB": 1e9}
    found = re.fullmatch(r"([\d.]+)\s*([A-Za-z]+)", text.strip())
    assert found, text
    return float(found[1]) * units[found[2]]


def test_top_agrees_with_docker_stats(module_ws: Workspace, session: Any) -> None:
    """#14 item 1: CPU and memory of a busy container as ``docker stats`` sees them."""
    sid = session["id"]
    busy = (
        "nohup python3 -c 'import time; b = bytearray(96 << 20); t = time.time()\n"
        "while time.time() - t < 30: pass' >/dev/null 2>&1 & echo $! > /tmp/burner.pid"
    )
    module_ws.sh(sid, "sub1", busy)
    time.sleep(3)  # the burner is up to speed
    sub1 = next(c for c in session["containers"] if c["host"] == "sub1")
    # The CPU limit is 0.5: both see at most about 50 % of one CPU. On a loaded
    # machine (CI runs tests in parallel on 2 CPUs) the burner gets less than its
    # quota, and what it gets swings from one second to the next: ours is read
    # between two `docker stats` samples and must be within 15 points of the range
    # they span, in one of three tries.
    tries = []
    for _ in range(3):
        before = _docker_stats(sub1["container_id"])
        ours = json.loads(module_ws.ok_cli("top", sid, "--json").stdout)
        theirs = _docker_stats(sub1["container_id"])
        mine = ours["sub1"]
        seen = [float(x["CPUPerc"].rstrip("%")) for x in (before, theirs)]
        tries.append((mine["cpu_percent"], seen))
        if min(seen) - 15 < mine["cpu_percent"] < max(seen) + 15:
            break
    else:
        pytest.fail(f"top's CPU never agreed with docker stats' (ours, theirs): {tries}")
    assert 20 < mine["cpu_percent"] < 65, mine
    used, limit = (_bytes(x.strip()) for x in theirs["MemUsage"].split("/"))
    assert mine["mem_limit"] == limit == 512 << 20
    assert abs(mine["mem_used"] - used) < 0.15 * used and mine["mem_used"] > 96 << 20, mine
    assert ours["main1"]["cpu_percent"] < 20  # idle meanwhile
    table = module_ws.ok_cli("top", sid, "--once").stdout.splitlines()
    assert table[1].split()[:2] == ["HOST", "CPU"] and len(table) == 5, table
    module_ws.sh(sid, "sub1", 'kill "$(cat /tmp/burner.pid)"')
