"""The agent hosts' guard of session bridges without Docker: names, the script (run
against stand-in iptables commands), and the engine putting it up once per agent."""

from __future__ import annotations

import logging
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest
from aiodocker.exceptions import DockerError
from traitlets import TraitError
from traitlets.config import Config

from jupyter_cluster.core import egress
from jupyter_cluster.core.host_guard import (
    BRIDGE_PREFIX,
    GUARD_CHAIN,
    guard_script,
    session_bridge,
    warm_bridge,
)
from jupyter_cluster.core.naming import DEFAULT_IMAGE, LABEL_WARM
from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.engine.agents.docker.connection import DockerConnection
from jupyter_cluster.engine.agents.fake import FakeAgent
from jupyter_cluster.engine.guard_refresh import GuardRefresh
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.errors import LaunchFailed
from tests.support.waiting import eventually

SESSION_ID = "0123abcd-4567-89ef-0123-456789abcdef"


def test_every_bridge_name_fits_linux_and_starts_with_the_guarded_prefix() -> None:
    names = [
        session_bridge(SESSION_ID),
        session_bridge(SESSION_ID, restricted=True),
        warm_bridge("89ef0123456789abcdef0123456789ab"),
    ]
    assert names == ["jcs0123abcd4567", egress.bridge_name(SESSION_ID), "jcw89ef01234567"]
    assert all(len(n) <= 15 and n.startswith(BRIDGE_PREFIX) for n in names)
    assert egress.BRIDGE_PREFIX.startswith(BRIDGE_PREFIX)  # the egress chain's bridges too


def test_the_chain_refuses_new_connections_of_users_but_root_except_to_published_ports() -> None:
    script = guard_script()
    chain = GUARD_CHAIN
    rules = [
        f"-A {chain} -m conntrack ! --ctstate NEW -j RETURN",  # replies pass
        f"-A {chain} -m conntrack --ctstate DNAT -j RETURN",  # published ports pass
        f"-A {chain} -m owner --uid-owner 0 -j RETURN",
        f"-A {chain} -p tcp -m owner ! --uid-owner 0 -j REJECT --reject-with tcp-reset",
        f"-A {chain} -m owner ! --uid-owner 0 -j REJECT",
    ]
    positions = [script.index(rule) for rule in rules]
    assert positions == sorted(positions)
    assert "for out in jc+ docker_gwbridge; do" in script
    assert script.rstrip().endswith("guard ip6tables")


def fake_iptables(tmp_path: Path, jumps_already: int) -> Path:
    """Stand-ins for iptables(-restore) and ip6tables(-restore) that log their
    arguments; ``-S OUTPUT`` lists ``jumps_already`` jumps per interface."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls"
    for tool in ("iptables", "ip6tables"):
        (bin_dir / tool).write_text(
            "#!/bin/sh\n"
            f'echo "{tool} $*" >> {log}\n'
            'case "$*" in\n'
            f'  *" -C "*) [ {jumps_already} -gt 0 ] ;;\n'
            f'  *" -S OUTPUT") i=0; while [ $i -lt {jumps_already} ]; do\n'
            f'      echo "-A OUTPUT -o jc+ -j {GUARD_CHAIN}";\n'
            f'      echo "-A OUTPUT -o docker_gwbridge -j {GUARD_CHAIN}"; i=$((i+1)); done ;;\n'
            "esac\n"
        )
        (bin_dir / f"{tool}-restore").write_text(
            f'#!/bin/sh\necho "{tool}-restore $*" >> {log}\ncat >> {tmp_path}/restored\n'
        )
    for tool in bin_dir.iterdir():
        tool.chmod(0o755)
    return bin_dir


@pytest.mark.parametrize("jumps_already", [0, 1, 3])
def test_the_script_leaves_exactly_one_jump_per_interface(
    tmp_path: Path, jumps_already: int
) -> None:
    bin_dir = fake_iptables(tmp_path, jumps_already)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    subprocess.run(["sh", "-c", guard_script()], env=env, check=True, timeout=30)
    calls = [c for c in (tmp_path / "calls").read_text().splitlines() if c.startswith("iptables")]
    assert "iptables-restore -w --noflush" in calls
    for out in ("jc+", "docker_gwbridge"):
        jump = f"OUTPUT -o {out} -j {GUARD_CHAIN}"
        inserted = calls.count(f"iptables -w -I {jump}")
        deleted = calls.count(f"iptables -w -D {jump}")
        assert inserted == (0 if jumps_already else 1)
        assert deleted == max(jumps_already - 1, 0)
    assert f":{GUARD_CHAIN} - [0:0]" in (tmp_path / "restored").read_text()


# -- the engine, with a fake agent ------------------------------------------------


def manager_for(
    tmp_path: Path,
    agent: FakeAgent,
    warm_pool: Sequence[dict[str, object]] = (),
    **hardening: object,
) -> ClusterManager:
    """An engine on ``agent`` with ``c.ContainerHardening`` set to ``hardening``."""
    return ClusterManager(
        db_path=str(tmp_path / "cluster.db"),
        data_root=str(tmp_path / "folders"),
        agent_factory=lambda config: agent,
        warm_pool=list(warm_pool),
        config=Config({"ContainerHardening": hardening}),
    )


async def test_the_guard_is_put_once_per_agent_and_every_bridge_is_named_for_it(
    tmp_path: Path,
) -> None:
    agent = FakeAgent("local", ready_on_start=True)
    manager = manager_for(tmp_path, agent)
    first = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE, size=2))
    second = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE))
    assert agent.host_scripts == [guard_script()]  # once for this process
    for session in (first, second):
        assert session.status is SessionStatus.RUNNING
        assert agent.bridges[f"jc-{session.id[:12]}"] == session_bridge(session.id)
        await manager.terminate(session.id)
    assert manager.pool.guards.guarded(agent)


async def test_without_the_guard_docker_names_the_bridge_and_nothing_runs_on_the_host(
    tmp_path: Path,
) -> None:
    agent = FakeAgent("local", ready_on_start=True)
    manager = manager_for(tmp_path, agent, guard_bridges=False)
    session = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE))
    assert agent.host_scripts == [] and agent.bridges[f"jc-{session.id[:12]}"] == ""
    await manager.terminate(session.id)


async def test_an_agent_without_the_guards_image_fails_the_launch_saying_what_to_do(
    tmp_path: Path,
) -> None:
    image = "reg.local:5000/team/kernel:1"
    agent = FakeAgent("local", images=(image,), ready_on_start=True)
    manager = manager_for(tmp_path, agent)
    with pytest.raises(LaunchFailed) as failed:
        await manager.launch(manager.make_spec(image=image, size=2))
    message = str(failed.value)
    assert f"agent local lacks {DEFAULT_IMAGE}" in message
    assert f"jupyter cluster image push-to-agents {DEFAULT_IMAGE} --agent local" in message
    assert "guard_bridges = False" in message
    assert not [b for b in agent.containers.values() if b.status != "removed"]
    assert not agent.networks  # nothing left behind
    assert not manager.pool.guards.guarded(agent)
    # The failure is not remembered: once the image is there, the next launch works.
    agent.images.add(DEFAULT_IMAGE)
    session = await manager.launch(manager.make_spec(image=image))
    assert session.status is SessionStatus.RUNNING and agent.host_scripts == [guard_script()]
    await manager.terminate(session.id)


async def test_a_warm_sets_bridge_is_named_for_the_guard_which_is_up_before_it_is_ready(
    tmp_path: Path,
) -> None:
    agent = FakeAgent("local", ready_on_start=True, cpu=8.0)
    manager = manager_for(tmp_path, agent, warm_pool=[{"cpu": 1, "mem": "1g", "size": 2}])
    assert await manager.warm.fill() == 1
    (ready,) = manager.warm.table.ready()
    (network,) = [n for n in agent.networks.values() if LABEL_WARM in n.labels]
    assert agent.bridges[network.name] == warm_bridge(ready.set_id)
    assert agent.host_scripts == [guard_script()]
    await manager.warm.drain()


async def test_every_engine_of_a_process_shares_the_guard_which_is_put_again_later(
    tmp_path: Path,
) -> None:
    agent = FakeAgent("local", ready_on_start=True)  # one host, as kernels of one server see it
    first, second = (manager_for(tmp_path / name, agent) for name in ("a", "b"))
    for manager in (first, second):
        session = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE))
        await manager.terminate(session.id)
    assert agent.host_scripts == [guard_script()]
    second.pool.guards.refresh = 0.0  # as if guard_refresh had passed: a reset is undone
    session = await second.launch(second.make_spec(image=DEFAULT_IMAGE))
    assert agent.host_scripts == [guard_script()] * 2
    await second.terminate(session.id)


async def test_an_agent_found_out_of_reach_gets_the_guard_again(tmp_path: Path) -> None:
    agent = FakeAgent("local", ready_on_start=True)
    manager = manager_for(tmp_path, agent)
    for _ in range(2):
        session = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE))
        await manager.terminate(session.id)
        assert agent.host_scripts == [guard_script()]
    # A Docker client of the same agent host cannot reach it (a restarted host or
    # agent container comes back with an empty firewall).
    lost = DockerConnection(agent.config).failure("listing containers", ConnectionError())
    assert "is unavailable" in str(lost)
    session = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE))
    assert agent.host_scripts == [guard_script()] * 2
    await manager.terminate(session.id)
    answered = DockerConnection(agent.config).failure("x", DockerError(500, "no"))
    assert "failed: no" in str(answered)  # the engine answered: the guard is still there
    session = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE))
    assert agent.host_scripts == [guard_script()] * 2
    await manager.terminate(session.id)


# -- put again while sessions run (engine/guard_refresh.py) ----------------------------


def guard_refresh_of(manager: ClusterManager) -> GuardRefresh:
    """The server's upkeep job that puts the guard again."""
    (job,) = [j for j in manager.upkeep(lambda: None) if isinstance(j, GuardRefresh)]
    return job


def test_guard_refresh_is_how_long_a_host_counts_as_guarded(tmp_path: Path) -> None:
    agent = FakeAgent("local", ready_on_start=True)
    assert manager_for(tmp_path / "a", agent).pool.guards.refresh == 300.0
    assert manager_for(tmp_path / "b", agent, guard_refresh=42).pool.guards.refresh == 42.0
    with pytest.raises(TraitError, match="guard_refresh"):
        manager_for(tmp_path / "c", agent, guard_refresh=0.5)


async def test_a_server_puts_the_guard_again_on_the_hosts_of_active_sessions_only(
    tmp_path: Path,
) -> None:
    busy = FakeAgent("busy", ready_on_start=True)
    idle = FakeAgent("idle", ready_on_start=True, cpu=0.5)  # no room for the session
    manager = ClusterManager(
        db_path=str(tmp_path / "cluster.db"),
        data_root=str(tmp_path / "folders"),
        agents=[{"id": "busy"}, {"id": "idle"}],
        agent_factory=lambda config: {"busy": busy, "idle": idle}[config.id],
    )
    session = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE, cpu=1))
    assert busy.host_scripts == [guard_script()] and idle.host_scripts == []
    refresh = guard_refresh_of(manager)
    assert refresh.hosts() == ["busy"]
    await refresh.refresh_once()  # put just now: nothing to do
    assert busy.host_scripts == [guard_script()]
    manager.pool.guards.refresh = 0.0  # guard_refresh has passed (a reset may have happened)
    await refresh.refresh_once()
    assert busy.host_scripts == [guard_script()] * 2 and idle.host_scripts == []
    await manager.terminate(session.id)
    assert refresh.hosts() == []
    await refresh.refresh_once()  # no active session there: no helper
    assert busy.host_scripts == [guard_script()] * 2


async def test_the_rounds_run_in_the_background_and_a_failure_is_logged_not_raised(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    image = "reg.local:5000/team/kernel:1"
    agent = FakeAgent("local", images=(image, DEFAULT_IMAGE), ready_on_start=True)
    manager = manager_for(tmp_path, agent, guard_refresh=2)
    session = await manager.launch(manager.make_spec(image=image))
    refresh = guard_refresh_of(manager)
    agent.images.discard(DEFAULT_IMAGE)  # the helper's image went away
    manager.pool.guards.refresh = 0.0
    with caplog.at_level(logging.WARNING):
        await refresh.refresh_once()
        await refresh.refresh_once()
    failures = [r for r in caplog.records if "guard of session bridges" in r.getMessage()]
    assert len(failures) == 1, "logged once while the error stays the same"
    assert f"lacks {DEFAULT_IMAGE}" in failures[0].getMessage()
    agent.images.add(DEFAULT_IMAGE)
    refresh.start()  # every quarter of refresh (at least 0.5 s)
    try:

        async def put_again() -> bool:
            return len(agent.host_scripts) >= 2

        await eventually(put_again, 5, "a round in the background")
    finally:
        await refresh.stop()
    assert (await manager.get(session.id)).status is SessionStatus.RUNNING
    await manager.terminate(session.id)


async def test_with_the_guard_off_no_round_puts_it(tmp_path: Path) -> None:
    agent = FakeAgent("local", ready_on_start=True)
    manager = manager_for(tmp_path, agent, guard_bridges=False)
    session = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE))
    manager.pool.guards.refresh = 0.0
    await guard_refresh_of(manager).refresh_once()
    assert agent.host_scripts == []
    await manager.terminate(session.id)
