"""A launch's priority (``LaunchSpec.priority``): parsed from input, kept by the store,
passed through ``ClusterManager.make_spec``; the queue orders by it (see
``test_queue_order.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jupyter_cluster.core.models import LaunchSpec, Session
from jupyter_cluster.core.naming import plan_containers
from jupyter_cluster.core.quota import Quota
from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.engine.store.sessions import Store
from jupyter_cluster.errors import InvalidRequest
from tests.support.constants import IMAGE


@pytest.mark.parametrize(("value", "expected"), [(None, 0), ("", 0), (3, 3), ("-2", -2), (4.0, 4)])
def test_priority_is_a_whole_number(value: Any, expected: int) -> None:
    assert LaunchSpec.create(image=IMAGE, priority=value).priority == expected


@pytest.mark.parametrize("value", ["high", 1.5, True, [1]])
def test_a_priority_that_is_no_whole_number_is_refused(value: Any) -> None:
    with pytest.raises(InvalidRequest, match="priority") as caught:
        LaunchSpec.create(image=IMAGE, priority=value)
    assert caught.value.field == "priority"


def test_the_store_keeps_the_priority(tmp_path: Path) -> None:
    spec = LaunchSpec.create(image=IMAGE, priority=7)
    assert LaunchSpec.from_dict(spec.to_dict()) == spec
    old = spec.to_dict()
    del old["priority"]  # a record written before priorities existed
    assert LaunchSpec.from_dict(old).priority == 0
    store = Store(tmp_path / "cluster.db")
    try:
        session = Session(
            id="s1",
            spec=spec,
            status=SessionStatus.PENDING,
            containers=plan_containers("s1", 1),
            created_at=1.0,
            updated_at=1.0,
        )
        store.insert_session(session, Quota())
        assert store.require("s1").spec.priority == 7
    finally:
        store.close()


def test_the_cli_and_the_services_client_pass_a_launch_priority_on() -> None:
    """`launch --priority N` reaches make_spec; in team mode it goes in the REST body,
    where the service's gate checks it against the caller's policy."""
    from jupyter_cluster.cli.launch_flags import launch_fields
    from jupyter_cluster.cli.parser import build_parser
    from jupyter_cluster.client.remote_engine import RemoteEngine

    fields = launch_fields(build_parser().parse_args(["launch", "--priority", "3"]))
    assert fields["priority"] == 3
    assert "priority" not in launch_fields(build_parser().parse_args(["launch"]))
    engine = RemoteEngine("https://cluster.example", "token")
    assert engine.make_spec(size=1, priority=3).body["priority"] == 3
    with pytest.raises(SystemExit):  # argparse: not a whole number
        build_parser().parse_args(["launch", "--priority", "high"])
