"""The warm pool on real Docker for sessions with data folders: a set made for a
folder is taken by a launch that mounts it (the folder's files are there, writable),
and closing the manager leaves no warm container or network behind."""

from __future__ import annotations

import subprocess

import pytest

from jupyter_cluster.core import naming
from jupyter_cluster.core.resources import Mount

from .support import Workspace
from .test_warm_pool import run

pytestmark = pytest.mark.docker


def ours(manager_id: str, what: str) -> list[str]:
    """Ids of this manager's warm containers or networks still in Docker."""
    labels = ["--filter", f"label={naming.LABEL_MANAGER}={manager_id}"]
    labels += ["--filter", f"label={naming.LABEL_WARM}"]
    command = ["docker", "ps", "-aq", *labels] if what == "containers" else []
    if what == "networks":
        command = ["docker", "network", "ls", "-q", *labels]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return done.stdout.split()


async def test_a_folder_session_takes_a_set_made_for_its_folder(ws: Workspace) -> None:
    shape = {"cpu": 0.25, "mem": "256m", "size": 1, "mounts": ["data"]}
    manager = ws.manager(warm_pool=[shape])
    try:
        await manager.start()
        folder = await manager.create_folder("data")
        (ws.folders_root / folder.name / "hello.txt").write_text("from the host\n")
        assert await manager.warm.fill() == 1
        (ready,) = manager.warm.table.ready()
        warm = manager.warm.table.containers_of(ready.set_id)

        # Without the folder, the shape is another: cold, beside the pool.
        plain = await manager.launch(manager.make_spec(size=1, cpu=0.25, mem="256m"))
        assert plain.network == "" and not {c.container_id for c in plain.containers} & warm

        spec = manager.make_spec(size=1, cpu=0.25, mem="256m", mounts=[Mount("data")])
        session = await manager.launch(spec)
        assert {c.container_id for c in session.containers} == warm
        assert session.network.startswith("jc-warm-")
        assert await run(manager, session, "main1", "cat ~/data/hello.txt") == "from the host"
        await run(manager, session, "main1", "echo back > ~/data/written.txt")
        assert (ws.folders_root / "data" / "written.txt").read_text() == "back\n"
        for s in (plain, session):
            await manager.terminate(s.id)
        assert await manager.warm.fill() == 1  # refilled for the folder
        await manager.warm.drain()
    finally:
        await manager.warm.drain()  # what a server's upkeep does as it stops
        await manager.close()
    assert ours(manager.store.manager_id, "containers") == []
    assert ours(manager.store.manager_id, "networks") == []
