"""A failed launch's logs are kept whole (#14 item 3), with the fake agent: the launcher
hands every container it created to the manager's hook before removing them, so
``logs`` reads all of a failed bootstrap's output, not the tail in the reason."""

from __future__ import annotations

from pathlib import Path

import pytest
from traitlets.config import Config

from jupyter_cluster.core.naming import DEFAULT_IMAGE, FAILED_MARKERS, READY_MARKER
from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.engine.agents.fake import FakeAgent
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.errors import LaunchFailed, NotFound


class FailingSub1(FakeAgent):
    """main1 gets ready; sub1 prints 300 lines, then its bootstrap fails."""

    async def start_container(self, container_id: str) -> None:
        await super().start_container(container_id)
        box = self.containers[container_id]
        if box.spec.hostname != "sub1":
            self.emit(container_id, READY_MARKER)
            return
        for i in range(300):
            self.emit(container_id, f"boot line {i}")
        self.emit(container_id, f"{FAILED_MARKERS[1]} (exit code 3)")
        self.exit(container_id, 3)


def manager_with(tmp_path: Path, agent: FakeAgent, **settings: object) -> ClusterManager:
    return ClusterManager(
        db_path=str(tmp_path / "cluster.db"),
        data_root=str(tmp_path / "folders"),
        agent_factory=lambda config: agent,
        config=Config({"ClusterManager": settings}),
    )


async def lines(manager: ClusterManager, ref: str, host: str) -> list[str]:
    return [line async for line in manager.logs(ref, host)]


async def test_a_failed_launch_keeps_every_containers_whole_log(tmp_path: Path) -> None:
    agent = FailingSub1("local")
    manager = manager_with(tmp_path, agent)
    with pytest.raises(LaunchFailed, match="sub1"):
        await manager.launch(manager.make_spec(image=DEFAULT_IMAGE, size=2))
    (session,) = await manager.list(include_ended=True)
    assert session.status is SessionStatus.ERROR
    assert "boot line 0\n" not in session.status_reason  # the reason has only a tail
    assert not agent.containers and not agent.networks  # removed all the same
    sub1 = await lines(manager, session.id, "sub1")
    assert sub1[:300] == [f"boot line {i}\n" for i in range(300)]
    assert sub1[300].startswith(FAILED_MARKERS[1]) and len(sub1) == 301
    assert (await lines(manager, session.id, "main1")) == [f"{READY_MARKER}\n"]
    manager.check_logs(session, "sub1")  # what the REST handler asks first
    # removing the ERROR session later keeps those copies (its containers are gone)
    assert (await manager.terminate(session.id)).status is SessionStatus.TERMINATED
    assert len(await lines(manager, session.id, "sub1")) == 301


async def test_with_keep_logs_off_a_failed_launchs_logs_go_with_it(tmp_path: Path) -> None:
    agent = FailingSub1("local")
    manager = manager_with(tmp_path, agent, keep_logs=False)
    with pytest.raises(LaunchFailed):
        await manager.launch(manager.make_spec(image=DEFAULT_IMAGE, size=2))
    (session,) = await manager.list(include_ended=True)
    with pytest.raises(NotFound):
        await lines(manager, session.id, "sub1")
    assert not manager.log_archive.root.exists()
