"""main1 of a cold single-agent launch is created, and its files copied in, while
the session network is being made, then moved onto that network before it starts
(``launch.creating.created_early``); so is sub1 when it carries the other subs'
files (``launch.shared_files``). The fake agent records the order of the calls.
Other subs, multi-agent sessions and an agent that refuses fall back to the usual
order.
Fresh containers also get work's log FIFO in their start-up files."""

from __future__ import annotations

import asyncio
import io
import tarfile
from pathlib import Path

import pytest

from jupyter_cluster.core import naming
from jupyter_cluster.core.models import LaunchSpec
from jupyter_cluster.core.naming import WORK_UID
from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.engine.agents.base import DEFAULT_BRIDGE
from jupyter_cluster.engine.agents.docker.archive import files_tar
from jupyter_cluster.engine.agents.fake import DEFAULT_IMAGE, FakeAgent
from jupyter_cluster.errors import AgentError, LaunchFailed

from .engine_parts import build, manager_over


class SlowNetworks(FakeAgent):
    """A fake agent whose networks take a while to make (as Docker's: 0.05-0.1 s)."""

    async def create_network(self, *args: object, **kwargs: object) -> str:
        await asyncio.sleep(0.05)
        return await super().create_network(*args, **kwargs)  # type: ignore[arg-type]


def order(agent: FakeAgent, *methods: str) -> list[str]:
    return [m for m, _ in agent.calls if m in methods]


async def test_main1_is_made_while_its_network_is_and_starts_on_it(tmp_path: Path) -> None:
    agent = SlowNetworks("local", ready_on_start=True)
    parts = build(tmp_path, agent)
    session = await parts.launcher.launch(LaunchSpec.create(image=DEFAULT_IMAGE, size=2))
    assert session.status is SessionStatus.RUNNING
    calls = order(
        agent,
        "create_network",
        "create_container",
        "put_files",
        "move_to_network",
        "start_container",
    )
    # main1 is created and filled before the network exists (the fake records a
    # network once made); sub1 only after.
    assert calls[:3] == ["create_container", "put_files", "create_network"], calls
    assert calls[3:].count("create_container") == 1, calls
    assert calls.count("move_to_network") == 1
    assert calls.index("move_to_network") < calls.index("start_container")
    main, sub = (agent.containers[c.container_id or ""] for c in session.containers)
    network = f"jc-{session.id[:12]}"
    assert main.spec.network == sub.spec.network == network
    assert main.spec.aliases == ("main1",)
    parts.close()


async def test_the_carrier_of_the_subs_files_is_made_and_filled_while_the_network_is(
    tmp_path: Path,
) -> None:
    agent = SlowNetworks("local", ready_on_start=True)
    parts = build(tmp_path, agent)
    session = await parts.launcher.launch(LaunchSpec.create(image=DEFAULT_IMAGE, size=4))
    assert session.status is SessionStatus.RUNNING
    main, carrier, *subs = (agent.containers[c.container_id or ""] for c in session.containers)
    made = [c for c in agent.calls if c[0] in ("create_network", "put_files", "start_container")]
    network_made = made.index(("create_network", f"jc-{session.id[:12]}"))
    # main1's and the carrier's copies are both in before the network exists.
    assert {("put_files", main.id), ("put_files", carrier.id)} == set(made[:network_made]), made
    created = [t for m, t in agent.calls if m == "create_container"]
    assert created.index(carrier.spec.name) < min(created.index(s.spec.name) for s in subs)
    moved = [t for m, t in agent.calls if m == "move_to_network"]
    assert sorted(moved) == sorted([main.id, carrier.id])
    assert main.spec.network == carrier.spec.network == subs[0].spec.network
    assert carrier.spec.aliases == ("sub1",)
    starts = [t for m, t in agent.calls if m == "start_container"]
    assert set(starts) == {main.id, carrier.id, *(s.id for s in subs)}
    parts.close()


async def test_a_session_over_several_agents_makes_its_overlay_first(tmp_path: Path) -> None:
    agents = {f"a{i}": FakeAgent(f"a{i}", cpu=1, ready_on_start=True) for i in range(2)}
    manager = manager_over(tmp_path, agents)
    spec = manager.make_spec(image=DEFAULT_IMAGE, size=2, cpu=1, mode="multi-node")
    session = await manager.launch(spec)
    assert session.status is SessionStatus.RUNNING
    assert {c.agent for c in session.containers} == set(agents)
    for agent in agents.values():
        assert not order(agent, "move_to_network")
        assert all(box.spec.network != DEFAULT_BRIDGE for box in agent.containers.values())
        # No volume of start-up files across agents: each container gets its own copy.
        (box,) = agent.containers.values()
        assert agent.volumes == {} and box.spec.mounts == ()
        assert [c for m, c in agent.calls if m == "put_files"] == [box.id]
    await manager.terminate(session.id)
    await manager.close()


async def test_an_agent_that_will_not_move_it_gets_it_made_the_usual_way(tmp_path: Path) -> None:
    agent = SlowNetworks("local", ready_on_start=True)
    agent.fail_on["move_to_network"] = AgentError("agent local: no such network", "local")
    parts = build(tmp_path, agent)
    session = await parts.launcher.launch(LaunchSpec.create(image=DEFAULT_IMAGE, size=1))
    assert session.status is SessionStatus.RUNNING
    (box,) = agent.containers.values()  # the one made ahead was removed
    assert box.spec.network == f"jc-{session.id[:12]}" and box.status == "running"
    assert order(agent, "create_container", "remove_container").count("create_container") == 2
    parts.close()


async def test_fresh_containers_come_with_works_log_fifo(tmp_path: Path) -> None:
    """The kernel's wrapper finds its output FIFO the moment main1 runs (it is in
    the start-up files, owned by work), and the tar Docker gets says it is one."""
    agent = FakeAgent("local", ready_on_start=True)
    parts = build(tmp_path, agent)
    session = await parts.launcher.launch(LaunchSpec.create(image=DEFAULT_IMAGE, size=2))
    for container in session.containers:
        files = agent.containers[container.container_id or ""].files
        fifo = files[naming.LOG_FIFO]
        assert fifo.fifo and (fifo.uid, fifo.gid, fifo.mode) == (WORK_UID, WORK_UID, 0o600)
        assert files[naming.RUN_DIR].directory and files[naming.RUN_DIR].uid == WORK_UID
    parts.close()
    with tarfile.open(fileobj=io.BytesIO(files_tar([fifo]))) as tar:
        (member,) = tar.getmembers()
    assert member.isfifo() and member.name == naming.LOG_FIFO.lstrip("/")


async def test_a_network_that_cannot_be_made_is_cleaned_up_by_one_sweep(tmp_path: Path) -> None:
    """main1, made ahead, is removed when its network fails; the clean-up is
    bring_up's alone: the session's containers are listed once for their logs and
    once by the sweep (the network's maker no longer sweeps before it)."""
    agent = SlowNetworks("local", ready_on_start=True)
    agent.fail_on["create_network"] = AgentError("agent local: pool overlaps", "local")
    parts = build(tmp_path, agent)
    session = await parts.launcher.submit(LaunchSpec.create(image=DEFAULT_IMAGE, size=2))
    with pytest.raises(LaunchFailed, match="could not create the session network"):
        await parts.launcher.drive(session.id)
    assert agent.containers == {} and agent.networks == {}
    assert order(agent, "create_container") == ["create_container"]  # main1, ahead
    listed = [labels for method, labels in agent.calls if method == "list_containers"]
    session_label = f"{naming.LABEL_SESSION}={session.id}"
    assert [session_label in labels for labels in listed if "helper" not in labels] == [True] * 2, (
        listed
    )  # not the guard's own sweep of its helpers
    parts.close()
