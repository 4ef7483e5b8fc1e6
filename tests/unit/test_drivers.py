"""Driver liveness: a launch's driver counts as alive only while the very process
that took it over runs; a reused pid or a reboot (another start token) does not.

Reconciliation then fails a PREPARING session whose recorded driver is this
process's pid with another start token (the pid came back as a new process), and
leaves it alone while the recorded process is really this one.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from jupyter_cluster.core.naming import DEFAULT_IMAGE
from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.engine.agents.fake import FakeAgent
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.engine.store.drivers import Driver, driver_alive, start_token, this_process
from jupyter_cluster.engine.store.sessions import Store


def exited_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout)


def test_start_token_names_the_boot_and_the_start_time() -> None:
    token = start_token(os.getpid())
    boot, ticks = (token or "").split(":")
    with open("/proc/sys/kernel/random/boot_id") as f:
        assert boot == f.read().strip()
    assert int(ticks) > 0
    assert start_token(os.getpid()) == token  # stable for one process
    assert start_token(exited_pid()) is None


def test_a_child_has_its_own_token() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        mine, its = this_process(), this_process(child.pid)
        assert its.pid == child.pid and its.host == socket.gethostname()
        assert its.started and its.started != mine.started
        assert driver_alive(its)
    finally:
        child.kill()
        child.wait()
    assert not driver_alive(its)


def test_liveness_by_process_not_by_pid() -> None:
    me = this_process()
    assert driver_alive(me)
    assert not driver_alive(None)
    assert not driver_alive(Driver(exited_pid(), me.host, ""))
    boot, ticks = me.started.split(":")
    reused = Driver(me.pid, me.host, f"{boot}:{int(ticks) + 1}")  # same pid, new process
    assert not driver_alive(reused)
    rebooted = Driver(me.pid, me.host, f"00000000-0000-0000-0000-000000000000:{ticks}")
    assert not driver_alive(rebooted)
    # a store written before start tokens were recorded: existence is all we know
    assert driver_alive(Driver(me.pid, me.host, ""))
    # another host's process cannot be seen from here
    assert driver_alive(Driver(exited_pid(), f"not-{me.host}", "x:1"))


async def test_reconcile_fails_a_launch_whose_pid_came_back_as_another_process(
    tmp_path: Path,
) -> None:
    agent = FakeAgent("local")
    manager = ClusterManager(
        db_path=str(tmp_path / "cluster.db"),
        data_root=str(tmp_path / "folders"),
        agent_factory=lambda config: agent,
    )
    spec = manager.make_spec(image=DEFAULT_IMAGE, size=2)
    alive = await manager.submit(spec)
    reused = await manager.submit(spec)
    assert {alive.status, reused.status} == {SessionStatus.PREPARING}
    me = this_process()
    boot, ticks = me.started.split(":")
    manager.store.set_driver(reused.id, Driver(me.pid, me.host, f"{boot}:{int(ticks) - 1}"))
    await manager.refresh()
    failed = await manager.get(reused.id)
    assert failed.status is SessionStatus.ERROR
    assert f"the process launching it (pid {me.pid}) exited" in failed.status_reason
    assert (await manager.get(alive.id)).status is SessionStatus.PREPARING
    await manager.terminate(alive.id)


def test_a_store_from_before_start_tokens_gains_the_column(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT, status TEXT NOT NULL,"
        " status_reason TEXT NOT NULL DEFAULT '', record TEXT NOT NULL, created_at REAL NOT NULL,"
        " updated_at REAL NOT NULL, ended_at REAL, driver_pid INTEGER, driver_host TEXT)"
    )
    db.commit()
    db.close()
    store = Store(path)
    try:
        columns = {row[1] for row in store.transactions.db.execute("PRAGMA table_info(sessions)")}
        assert "driver_started" in columns
    finally:
        store.close()
    Store(path).close()  # opening it again (the column exists now) works too


def test_a_killed_process_not_yet_reaped_is_not_alive() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    driver = this_process(child.pid)
    child.kill()
    try:
        deadline = time.monotonic() + 10
        while start_token(child.pid) is not None:  # a zombie until we wait for it
            assert time.monotonic() < deadline, "the killed child still looks alive"
            time.sleep(0.02)
        assert not driver_alive(driver)
        with open(f"/proc/{child.pid}/stat") as f:
            assert f.read().split(") ")[1].startswith("Z")  # really a zombie
    finally:
        child.wait()
