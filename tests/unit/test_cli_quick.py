"""The listing commands' fast path answers only when the engine's start-up would
change nothing (``jupyter_cluster/cli/quick.py``).

:func:`~jupyter_cluster.cli.quick._check` is given a real store and agents that
answer with Docker's rows; every discrepancy reconciliation or the lifetime sweep
would act on must make it fall back to the engine. Its ``logs`` splits lines as
the engine does.
"""

from __future__ import annotations

import argparse
import logging
import random
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from jupyter_cluster.cli.quick import Fallback, _check, answer
from jupyter_cluster.cli.quick_logs import _Lines
from jupyter_cluster.core import naming
from jupyter_cluster.core.lines import MAX_LINE, LineSplitter
from jupyter_cluster.core.models import LaunchSpec, Session
from jupyter_cluster.core.naming import plan_containers
from jupyter_cluster.core.state import ContainerStatus, SessionStatus
from jupyter_cluster.engine.store.sessions import Store

SID = "4f1c2c1e-0000-4000-8000-000000000001"


class Rows:
    """An agent's reader answering with fixed ``docker ps -a`` and network rows."""

    def __init__(self, containers: list[dict[str, Any]], networks: list[dict[str, Any]]) -> None:
        self.rows = containers
        self.nets = networks

    def containers(self, labels: dict[str, str]) -> list[dict[str, Any]]:
        return self.rows

    def networks(self, labels: dict[str, str]) -> list[dict[str, Any]]:
        return self.nets


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    db = Store(tmp_path / "cluster.db")
    yield db
    db.close()


def settings(**changes: Any) -> Any:
    base = {"history_max_age_days": 0.0, "history_max_count": 0, "max_session_lifetime": 0.0}
    return SimpleNamespace(**(base | changes))


def running(store: Store, size: int = 2, **changes: Any) -> Session:
    """A RUNNING session of ``size`` containers on agent ``a``, recorded running."""
    containers = tuple(
        c.with_(agent="a", status=ContainerStatus.RUNNING, container_id=f"cid{c.local_rank}")
        for c in plan_containers(SID, size)
    )
    spec = LaunchSpec.create(image="img", size=size, mode="multi-node")
    fields = {"status": SessionStatus.RUNNING, "containers": containers, "created_at": time.time()}
    session = Session(id=SID, spec=spec, **(fields | changes))
    store.insert_session(session)
    return session


def row(session: Session, host: str, state: str = "running") -> dict[str, Any]:
    """Docker's row of ``host``'s container in ``session``."""
    container = session.locate(host)
    labels = {naming.LABEL_SESSION: session.id, naming.LABEL_HOST: host}
    return {"Id": container.container_id, "Labels": labels, "State": state}


def net(session_id: str) -> dict[str, Any]:
    return {"Labels": {naming.LABEL_SESSION: session_id}}


def agents(containers: list[dict[str, Any]], networks: list[dict[str, Any]]) -> list[Any]:
    return [(SimpleNamespace(id="a"), Rows(containers, networks))]


def test_a_consistent_store_is_answered_from(store: Store) -> None:
    s = running(store)
    _check(store, settings(), agents([row(s, "main1"), row(s, "sub1")], [net(s.id)]))


def test_nothing_at_all_is_consistent(store: Store) -> None:
    _check(store, settings(), agents([], []))


def test_warm_containers_nobody_recorded_are_the_pools(store: Store) -> None:
    warm = {"Id": "w1", "Labels": {naming.LABEL_WARM: "1"}, "State": "running"}
    _check(store, settings(), agents([warm], [{"Labels": {naming.LABEL_WARM: "1"}}]))


@pytest.mark.parametrize("state", ["exited", "paused", "created"])
def test_a_container_that_does_not_run_falls_back(store: Store, state: str) -> None:
    s = running(store)
    with pytest.raises(Fallback, match="sub1 is not running"):
        _check(store, settings(), agents([row(s, "main1"), row(s, "sub1", state)], [net(s.id)]))


def test_a_removed_container_falls_back(store: Store) -> None:
    s = running(store)
    with pytest.raises(Fallback, match="main1 is not running"):
        _check(store, settings(), agents([row(s, "sub1")], [net(s.id)]))


def test_a_container_of_no_live_session_falls_back(store: Store) -> None:
    orphan = {"Id": "x", "Labels": {naming.LABEL_SESSION: "gone"}, "State": "running"}
    with pytest.raises(Fallback, match="no live session"):
        _check(store, settings(), agents([orphan], []))


def test_a_network_of_no_live_session_falls_back(store: Store) -> None:
    with pytest.raises(Fallback, match="network"):
        _check(store, settings(), agents([], [net("gone")]))


@pytest.mark.parametrize("status", [SessionStatus.RUNNING_DEGRADED, SessionStatus.TERMINATING])
def test_sessions_reconciliation_may_change_fall_back(store: Store, status: SessionStatus) -> None:
    s = running(store, status=status)
    with pytest.raises(Fallback, match=status.value):
        _check(store, settings(), agents([row(s, "main1"), row(s, "sub1")], [net(s.id)]))


def test_a_container_recorded_exited_but_running_falls_back(store: Store) -> None:
    s = running(store)
    store.update_container(s.id, "sub1", status=ContainerStatus.EXITED)
    with pytest.raises(Fallback, match="recorded"):
        _check(store, settings(), agents([row(s, "main1"), row(s, "sub1")], [net(s.id)]))


def test_a_launch_without_a_live_driver_falls_back(store: Store) -> None:
    s = running(store, status=SessionStatus.PENDING, containers=())
    assert store.driver(s.id) is None
    with pytest.raises(Fallback, match="no live driver"):
        _check(store, settings(), agents([], []))


def test_a_session_near_its_time_limit_falls_back(store: Store) -> None:
    s = running(store, created_at=time.time() - 1000)
    rows = agents([row(s, "main1"), row(s, "sub1")], [net(s.id)])
    _check(store, settings(max_session_lifetime=3600.0), rows)
    with pytest.raises(Fallback, match="time limit"):  # within its last minute
        _check(store, settings(max_session_lifetime=1030.0), rows)
    with pytest.raises(Fallback, match="time limit"):  # past it
        _check(store, settings(max_session_lifetime=30.0), rows)


def test_history_past_its_limits_is_pruned_then_the_engine_runs(store: Store) -> None:
    s = running(store, status=SessionStatus.TERMINATED, ended_at=1.0)
    with pytest.raises(Fallback, match="forgotten"):
        _check(store, settings(history_max_age_days=1.0), agents([], []))
    assert store.get(s.id) is None
    _check(store, settings(history_max_age_days=1.0), agents([], []))


@pytest.mark.parametrize("seed", range(20))
def test_logs_split_lines_as_the_engine_does(seed: int) -> None:
    rng = random.Random(seed)
    lengths = [0, 1, 5, MAX_LINE - 1, MAX_LINE, MAX_LINE + 1, 3 * MAX_LINE + 7]
    text = "\n".join("x" * rng.choice(lengths[: 3 + seed % 5]) for _ in range(30))
    text += rng.choice(["", "\n", "tail"])
    cuts = sorted(rng.sample(range(len(text) + 1), min(len(text), 12)))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    engine, ours = LineSplitter(), _Lines()
    theirs = "".join(line for p in pieces for line in engine.feed(p)) + engine.flush()
    mine = "".join(line for p in pieces for line in ours.feed(p)) + ours.flush()
    assert mine == theirs


@pytest.mark.parametrize(
    "config",
    [
        "c.ClusterManager.service_url = 'https://cluster.example:8443'",
        "c.ClusterManager.agents = [{'id': 'far', 'url': 'tcp://far.example:2375', "
        "'insecure': True}]",
        "c.ClusterManager.agents = [{'id': 'ssh', 'url': 'ssh://me@far.example'}]",
        "c.ClusterManager.max_size = 'many'",
    ],
)
def test_what_only_the_engine_can_read_is_left_to_it(
    config: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "jupyter_cluster_config.py").write_text(config + "\n")
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path))
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("JUPYTER_CLUSTER_SERVICE_URL", raising=False)
    for command in ("ls", "show", "agents", "logs"):
        assert answer(argparse.Namespace(command=command, all=False, json=True)) is None


def test_other_commands_are_the_engines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path))
    for command in ("launch", "rm", "exec", "folder", "wait"):
        assert answer(argparse.Namespace(command=command)) is None


def test_the_quick_path_reads_every_key_of_the_engines_section(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A key of any of the engine's settings mixins (here the warm pool's and the queue
    order) is read by the quick path too, not warned about as unknown; a key of none
    of them is (the control that shows the warnings are seen)."""
    from jupyter_cluster.cli.quick import _settings
    from jupyter_cluster.engine.manager import ClusterManager

    (tmp_path / "jupyter_cluster_config.py").write_text(
        "c.ClusterManager.warm_pool_window = 60.0\nc.ClusterManager.queue_order = 'priority'\n"
        "c.ClusterManager.no_such_key = 1\n"
    )
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path))
    monkeypatch.delenv("JUPYTER_CLUSTER_SERVICE_URL", raising=False)
    # The quick path's logger writes to the stderr of its first use, which capsys of
    # an earlier test may have been: its records are read here instead.
    warned: list[str] = []
    seen = logging.Handler()
    seen.emit = lambda record: warned.append(record.getMessage())  # type: ignore[method-assign]
    logger = logging.getLogger("ClusterConfigApp")
    logger.addHandler(seen)
    try:
        settings = _settings()
    finally:
        logger.removeHandler(seen)
    assert set(type(settings).class_traits(config=True)) == set(
        ClusterManager.class_traits(config=True)
    )
    assert (settings.warm_pool_window, settings.queue_order) == (60.0, "priority")
    assert any("no_such_key" in w for w in warned), warned
    assert not any("warm_pool_window" in w for w in warned), warned
