"""What a server tells the engine's utilization clean-up of sessions' use
(``IdleWatcher.use``), without Docker or a running server.

The clean-up asks each source once per pass with every session it samples; the
server answers for the sessions whose kernel runs in it or into which a terminal is
open from it, from one walk over its kernels. A kernel manager that counts its
walks stands in for jupyter_server's.
"""

from __future__ import annotations

import datetime
import logging
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from jupyter_cluster.engine.utilization_idle import UtilizationWatch
from jupyter_cluster.server.idle import IdleWatcher
from jupyter_cluster.server.session_kernels import SessionKernels
from tests.unit.test_session_kernels import CountingKernels, Provisioner, session

WHEN = datetime.datetime(2026, 12, 7, 12, 0, tzinfo=datetime.timezone.utc)


@dataclass
class Kernel:
    provisioner: Any
    execution_state: str = "idle"
    last_activity: datetime.datetime = WHEN


class Terminals:
    """The service's record of the terminals it made, by session."""

    def __init__(self, names: dict[str, set[str]]) -> None:
        self._names = names

    def names(self, session_id: str) -> set[str]:
        return set(self._names.get(session_id, ()))


def watcher(km: CountingKernels, made: dict[str, set[str]], open_: set[str]) -> IdleWatcher:
    service = SimpleNamespace(
        engine=SimpleNamespace(utilization=None),
        kernel_manager=km,
        kernels=SessionKernels(lambda: km, "cluster", lambda: None, logging.getLogger("t")),
        terminal_manager=SimpleNamespace(terminals=dict.fromkeys(open_)),
        terminals=Terminals(made),
    )
    return IdleWatcher(service, timeout=600, interval=60)


def test_the_server_answers_for_every_session_with_one_walk_over_its_kernels() -> None:
    busy, quiet, by_terminal, elsewhere = (session() for _ in range(4))
    km = CountingKernels(
        {
            "k-busy": Kernel(Provisioner(busy.id), "busy"),
            "k-quiet": Kernel(Provisioner(quiet.id)),
        }
    )
    made = {by_terminal.id: {"t1", "t2"}, elsewhere.id: {"closed"}}
    known = watcher(km, made, open_={"t1", "t2"}).use([busy, quiet, by_terminal, elsewhere])
    assert km.walks == 1
    assert set(known) == {busy.id, quiet.id, by_terminal.id}  # nothing known of elsewhere
    assert known[busy.id].kernel_busy and known[busy.id].in_use
    assert not known[quiet.id].in_use
    assert known[quiet.id].last_use == WHEN.timestamp()
    assert known[by_terminal.id].open_terminals == 2 and known[by_terminal.id].in_use


def test_a_pass_of_the_clean_up_asks_each_source_once_with_all_sessions() -> None:
    sessions = [session() for _ in range(5)]
    km = CountingKernels({f"k-{i}": Kernel(Provisioner(s.id)) for i, s in enumerate(sessions)})
    server = watcher(km, {}, set())
    watch = UtilizationWatch(
        SimpleNamespace(),
        store=None,
        pool=None,
        exec_log=None,
        terminate=None,
    )
    asked: list[int] = []

    def counted(batch: Any) -> Any:
        asked.append(len(batch))
        return server.use(batch)

    watch.sources.append(counted)
    known = watch.known_use(sessions)
    assert asked == [5] and km.walks == 1
    assert known is not None
    assert all(len(known[s.id]) == 1 for s in sessions)
