"""Helpers that several unit test modules, or the processes they start, share.

Scheduler inputs drawn by Hypothesis (:func:`agent_slots`); sessions to store
(:func:`new_session`) and the worker of the store's multi-process tests
(:func:`place_worker`). A child process (``spawn``, or a fresh interpreter) imports
what it runs from here, never from a test module.
"""

from __future__ import annotations

import uuid
from typing import Any

from hypothesis import strategies as st

from jupyter_cluster.core.models import LaunchSpec, Session
from jupyter_cluster.core.naming import plan_containers
from jupyter_cluster.core.resources import Resources
from jupyter_cluster.core.scheduler import AgentSlot
from jupyter_cluster.engine.store.sessions import Store
from tests.support.constants import MIB

# -- the scheduler ----------------------------------------------------------------------


@st.composite
def agent_slots(draw: st.DrawFn, index: int) -> AgentSlot:
    """An agent ``agent{index}`` of any size, partly used, with or without GPUs."""
    cpu_milli = draw(st.integers(min_value=250, max_value=8000))
    mem = draw(st.integers(min_value=256, max_value=16384)) * MIB
    gpus = tuple(f"gpu{i}" for i in range(draw(st.integers(0, 4))))
    used_gpus = draw(st.sets(st.sampled_from(gpus))) if gpus else set()
    # Sums of many small amounts, as the store adds them up (float noise included).
    used_cpu = sum(draw(st.lists(st.sampled_from([0.1, 0.25, 0.5, 1.0]), max_size=8)))
    return AgentSlot(
        id=f"agent{index}",
        resource_group=draw(st.sampled_from(["default"] * 4 + ["other"])),
        capacity=Resources(cpu=cpu_milli / 1000, mem=mem, shm=0, gpu=len(gpus)),
        used=Resources(
            cpu=min(used_cpu, cpu_milli / 1000),
            mem=draw(st.integers(min_value=0, max_value=mem // MIB)) * MIB,
            shm=0,
            gpu=len(used_gpus),
        ),
        gpu_ids=gpus,
        used_gpu_ids=frozenset(used_gpus),
        has_image=draw(st.integers(0, 9)) > 0,
        schedulable=draw(st.integers(0, 9)) > 0,
        swarm="swarm",
    )


# -- the store --------------------------------------------------------------------------


def new_session(
    size: int = 1,
    cpu: float = 1.0,
    *,
    name: str | None = None,
    gpu: int = 0,
    mode: str = "single-node",
    sid: str | None = None,
    created_at: float = 0.0,
) -> Session:
    """A session of ``size`` planned containers (1 GB each), not stored yet."""
    sid = sid or str(uuid.uuid4())
    spec = LaunchSpec.create(
        image="img", size=size, cpu=cpu, mem="1g", gpu=gpu, name=name, mode=mode
    )
    return Session(id=sid, spec=spec, containers=plan_containers(sid, size), created_at=created_at)


def place_worker(
    path: str, sid: str | None, agents: list[AgentSlot], barrier: Any, results: Any
) -> None:
    """In a child process: open the store, wait for the others, place one 1-CPU session
    on ``agents`` (insert it first if sid is None); puts (sid, manager id, outcome)."""
    try:
        if sid is None:
            barrier.wait(timeout=60)
            store = Store(path)
            session = new_session(cpu=1)
            store.insert_session(session)
            sid = session.id
        else:
            store = Store(path)
            barrier.wait(timeout=60)
        # backfill: each worker tries once, whatever order the others inserted in
        result = store.try_place(sid, agents, backfill=True)
        results.put((sid, store.manager_id, type(result).__name__))
        store.close()
    except Exception as exc:  # reported to the parent, which fails the test
        results.put((sid, "", f"error: {exc!r}"))
