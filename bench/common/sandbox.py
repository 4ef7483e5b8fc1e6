"""A run's private Jupyter dirs and manager id, and the Docker objects it made.

Every benchmark that touches Docker runs in temporary Jupyter data/config/runtime
dirs (:func:`jupyter_dirs`), so its store, manager id and kernelspecs are its own
and nothing is written to the user's; at the end it looks (with the ``docker``
command line, an independent witness) for containers, networks and volumes still
carrying its labels (:func:`leftovers`) and fails if there are any
(:func:`check_nothing_left`).
Used by every entry script but ``bench_scheduler.py`` and ``run.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import traceback
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from common.constants import BENCH_LABEL


@contextmanager
def jupyter_dirs() -> Iterator[str]:
    """A private JUPYTER_DATA_DIR/CONFIG_DIR/RUNTIME_DIR/PATH for the run; removed after."""
    root = tempfile.mkdtemp(prefix="jc-bench-")
    saved = {k: v for k, v in os.environ.items() if k.startswith("JUPYTER")}
    for key in saved:
        del os.environ[key]
    os.environ.update(
        JUPYTER_DATA_DIR=os.path.join(root, "data"),
        JUPYTER_CONFIG_DIR=os.path.join(root, "config"),
        JUPYTER_RUNTIME_DIR=os.path.join(root, "runtime"),
        JUPYTER_PATH=os.path.join(root, "prefix", "share", "jupyter"),
        JUPYTER_PLATFORM_DIRS="0",
    )
    try:
        yield root
    finally:
        for key in [k for k in os.environ if k.startswith("JUPYTER")]:
            del os.environ[key]
        os.environ.update(saved)
        shutil.rmtree(root, ignore_errors=True)


def store_manager_id() -> str:
    """The manager id of the store in the current Jupyter data dir (made if new): the
    label value that marks this run's Docker objects."""
    from jupyter_cluster.engine.store.sessions import Store
    from jupyter_cluster.paths import default_db_path

    store = Store(default_db_path())
    try:
        return store.manager_id
    finally:
        store.close()


def docker_ids(*args: str) -> list[str]:
    """Ids printed by ``docker ARGS`` (a listing with ``-q``)."""
    done = subprocess.run(["docker", *args], capture_output=True, text=True, check=True)
    return done.stdout.split()


def leftovers(labels: list[str]) -> list[str]:
    """Containers, networks and volumes still carrying any of ``labels`` (per the
    docker CLI)."""
    found = []
    for label in labels:
        for kind in (("ps", "-aq"), ("network", "ls", "-q"), ("volume", "ls", "-q")):
            found += docker_ids(*kind, "--filter", f"label={label}")
    return found


def force_clean(ids: list[str]) -> None:
    """Remove containers (or networks, or volumes) by id or name, ignoring what is
    already gone."""
    for object_id in ids:
        subprocess.run(["docker", "rm", "-f", "-v", object_id], capture_output=True, check=False)
        subprocess.run(["docker", "network", "rm", object_id], capture_output=True, check=False)
        subprocess.run(["docker", "volume", "rm", object_id], capture_output=True, check=False)


def check_nothing_left(labels: list[str]) -> None:
    """Fail (``SystemExit``) if a container, network or volume carries any of
    ``labels``, after removing them."""
    left = leftovers(labels)
    if left:
        force_clean(left)
        if sys.exc_info()[0] is not None:  # called in a finally: SystemExit would hide it
            traceback.print_exc()
        raise SystemExit(f"the benchmark left Docker objects behind (removed now): {left}")


def describe_objects(ids: list[str]) -> list[str]:
    """``id name (kind)`` of Docker objects, for a message about leftovers."""
    found = []
    for object_id in ids:
        shown = subprocess.run(
            ["docker", "inspect", "--format", "{{.Name}} {{.Created}}", object_id],
            capture_output=True,
            text=True,
        ).stdout.strip()
        found.append(f"{object_id} {shown or '(gone)'}")
    return found


async def remove_bench_containers(docker: Any, run_id: str) -> None:
    """Remove every floor container of this run (aiodocker client ``docker``)."""
    found = await docker.containers.list(all=True, filters={"label": [f"{BENCH_LABEL}={run_id}"]})
    await asyncio.gather(*(c.delete(force=True, v=True) for c in found))


def add_run_id(parser: argparse.ArgumentParser) -> None:
    """``--run-id``: the label value (``BENCH_LABEL``) of the Docker objects a run
    makes; by default a fresh random one. A smoke test names it, to look for exactly
    what its run left and not another benchmark's."""
    parser.add_argument(
        "--run-id",
        default=uuid.uuid4().hex[:12],
        help="label value of this run's containers, networks and volumes (default: a "
        "random one; a test names it to look for exactly what this run left)",
    )
