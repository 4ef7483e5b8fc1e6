"""Cluster terminals' names, and the terminal service's refusal to reuse them."""

from __future__ import annotations

from typing import Any

import pytest
from tornado import web

from jupyter_cluster.server.terminal_names import (
    cluster_terminal_name,
    creating_cluster_terminal,
    is_cluster_name,
    keep_cluster_names,
)

SID = "29ecd1e9-9428-4f5e-9a51-0c7d3e2b8f10"


def test_a_name_is_free_and_says_host_and_session() -> None:
    first = cluster_terminal_name("sub1", SID, set())
    assert first == "cluster_sub1_29ecd1e99428_1" and is_cluster_name(first)
    taken = {first, "cluster_sub1_29ecd1e99428_2"}
    assert cluster_terminal_name("sub1", SID, taken) == "cluster_sub1_29ecd1e99428_3"
    assert cluster_terminal_name("main1", SID, taken) == "cluster_main1_29ecd1e99428_1"


@pytest.mark.parametrize(
    "name", ["1", "mine", "cluster_sub1_29ecd1e99428", "cluster_sub1_29ecd1e9-942_1", None, 7]
)
def test_other_names_are_not_cluster_names(name: Any) -> None:
    assert not is_cluster_name(name)


class Terminals:
    """What the guard wraps: a terminal manager's ``create`` (by keyword)."""

    def __init__(self) -> None:
        self.made: list[dict[str, Any]] = []

    def create(self, **kwargs: Any) -> dict[str, Any]:
        self.made.append(kwargs)
        return {"name": kwargs.get("name", str(len(self.made)))}


def test_only_cluster_terminals_take_cluster_names() -> None:
    terminals = Terminals()
    keep_cluster_names(terminals)
    keep_cluster_names(terminals)  # once only
    name = "cluster_sub1_29ecd1e99428_1"
    with pytest.raises(web.HTTPError) as refused:
        terminals.create(name=name)
    assert refused.value.status_code == 409 and "into sub1" in str(refused.value.log_message)
    assert terminals.made == []
    with creating_cluster_terminal():
        assert terminals.create(name=name, shell_command=["ssh"]) == {"name": name}
    with pytest.raises(web.HTTPError):
        terminals.create(name=name)  # the permission ended with the block
    assert terminals.create() == {"name": "2"} and terminals.create(name="x") == {"name": "x"}
    keep_cluster_names(None)  # terminals disabled: nothing to keep
