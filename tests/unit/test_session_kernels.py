"""How a server finds a session's kernel (``SessionKernels.kernel_of``) and shuts it
down (``SessionKernels.shut_down``), without Docker.

The kernel recorded with the session wins; else the kernel whose provisioner runs in
the session (a cluster kernelspec's, whose id jupyter_server chose); an ended session
and a server without kernels (the shared service) have none. A kernel manager that
counts its walks stands in for jupyter_server's.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass
from typing import Any

from jupyter_client.multikernelmanager import AsyncMultiKernelManager

from jupyter_cluster.core.launch_spec import LaunchSpec
from jupyter_cluster.core.models import Session
from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.server.session_kernels import SessionKernels


@dataclass
class Provisioner:
    session_id: str


@dataclass
class Kernel:
    provisioner: Any


class CountingKernels:
    """A kernel manager's lookups, counting how often its kernels are listed."""

    def __init__(self, kernels: dict[str, Kernel]) -> None:
        self.kernels, self.walks = kernels, 0

    def list_kernel_ids(self) -> list[str]:
        self.walks += 1
        return list(self.kernels)

    def get_kernel(self, kernel_id: str) -> Kernel:
        return self.kernels[kernel_id]

    def __contains__(self, kernel_id: object) -> bool:
        return kernel_id in self.kernels


def session(status: SessionStatus = SessionStatus.RUNNING, kernel_id: str | None = None) -> Session:
    return Session(
        id=str(uuid.uuid4()), spec=LaunchSpec(image="x"), status=status, kernel_id=kernel_id
    )


def kernels_of(km: Any) -> SessionKernels:
    return SessionKernels(lambda: km, "cluster", lambda: None, logging.getLogger("test"))


def test_the_kernel_whose_provisioner_runs_in_the_session_is_its_kernel() -> None:
    mine, other = session(), session()
    km = CountingKernels(
        {"k-other": Kernel(Provisioner(other.id)), "k-mine": Kernel(Provisioner(mine.id))}
    )
    kernels = kernels_of(km)
    assert kernels.kernel_of(mine) == "k-mine"
    assert kernels.kernel_of(other) == "k-other"
    assert kernels.kernel_of(session()) is None  # no kernel runs in it
    assert km.walks == 3


def test_a_recorded_kernel_is_taken_without_walking_the_servers_kernels() -> None:
    km = CountingKernels({"k-1": Kernel(Provisioner("another"))})
    assert kernels_of(km).kernel_of(session(kernel_id="k-rest")) == "k-rest"
    assert km.walks == 0


def test_an_ended_session_and_a_server_without_kernels_have_none() -> None:
    ended = session(SessionStatus.TERMINATED)
    km = CountingKernels({"k-1": Kernel(Provisioner(ended.id))})
    assert kernels_of(km).kernel_of(ended) is None
    assert km.walks == 0
    assert kernels_of(None).kernel_of(session()) is None
    no_provisioner = CountingKernels({"k-1": Kernel(None)})
    assert kernels_of(no_provisioner).kernel_of(session()) is None


def test_the_state_of_the_kernel_found_is_running_while_the_server_has_it() -> None:
    mine = session()
    km = CountingKernels({"k-mine": Kernel(Provisioner(mine.id))})
    kernels = kernels_of(km)
    kid = kernels.kernel_of(mine)
    assert kernels.state(mine, kid, here=True) == ("running", "")
    assert kernels.state(mine, kid, here=False) == ("remote", "")
    del km.kernels["k-mine"]
    assert kernels.state(mine, kid, here=True) == ("gone", "")
    assert kernels.state(mine, None, here=True) == (None, "")


def test_many_sessions_are_looked_up_with_one_walk_over_the_servers_kernels() -> None:
    """What a listing and the events poll do (``ClusterService.models``)."""
    sessions = [session() for _ in range(5)]
    km = CountingKernels({f"k-{i}": Kernel(Provisioner(s.id)) for i, s in enumerate(sessions)})
    km.kernels["k-plain"] = Kernel(None)  # a local kernel: no provisioner of ours
    kernels = kernels_of(km)
    found = kernels.by_session()
    assert [kernels.kernel_of(s, found) for s in sessions] == [f"k-{i}" for i in range(5)]
    assert kernels.kernel_of(session(), found) is None
    assert kernels.kernel_of(session(kernel_id="k-rest"), found) == "k-rest"
    assert km.walks == 1
    assert kernels_of(None).by_session() == {}


def test_a_kernel_is_got_only_while_the_server_has_it() -> None:
    mine = session()
    kernel = Kernel(Provisioner(mine.id))
    km = CountingKernels({"k-mine": kernel})
    kernels = kernels_of(km)
    assert kernels.get("k-mine") is kernel
    assert kernels.get("k-other") is None
    assert kernels.get(None) is None
    assert kernels_of(None).get("k-mine") is None  # the shared service: no kernels


async def test_a_kernel_its_restarter_is_restarting_is_shut_down_all_the_same(
    caplog: Any, tmp_path: Any
) -> None:
    """A session that ends kills its kernel, whose restarter may be restarting it
    when the server shuts it down: jupyter_client then failed with "Exception is
    not set." and the server kept the kernel. A real local ipykernel stands in."""
    km = AsyncMultiKernelManager(connection_dir=str(tmp_path))
    kid = await km.start_kernel(kernel_name="python3")
    try:
        await km.get_kernel(kid).ready
        restart = asyncio.ensure_future(km.get_kernel(kid).restart_kernel(now=True))
        await asyncio.sleep(0.05)  # as the restarter does, on the kernel's own manager
        assert not km.get_kernel(kid).ready.done()
        with caplog.at_level(logging.WARNING):
            await kernels_of(km).shut_down(kid)
        assert kid not in km
        assert not caplog.records
        await restart
    finally:
        if kid in km:
            await km.shutdown_kernel(kid, now=True)
