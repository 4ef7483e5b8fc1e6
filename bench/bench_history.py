"""``GET sessions`` of a server with a long history (issue 27, item 5).

Run as ``.venv/bin/python bench/bench_history.py [--ended 1000] [--repeat 30] [--quick]``.

The store of a private Jupyter data dir is filled with ``--ended`` TERMINATED
sessions (two containers each, as the store's own API writes them), then a real
``jupyter server`` with the extension is started on it and each request is timed,
alternating with the floor, over one HTTP connection per request:

ours: ``GET cluster/api/sessions`` (the active ones: what the CLI and the Lab's
    list ask), ``GET cluster/api/sessions?state=ended&limit=50`` (a page of the
    history, what the Lab's "Recent sessions" asks) and, for comparison,
    ``?all=1`` (the whole history in one answer).
floor: ``GET api/status`` of the same server (an authenticated request that does
    no work). Goal: the default listing and the page each answer in under 50 ms
    (median; the rows say met or MISSED in their note).

Also, in this process, what the adaptive warm pool reads of the same store at each
refill (every 5 s): ``Store.recent_launches`` over a window holding the whole
history (the latest placed launch of each shape; the sessions are of three shapes),
against the floor of counting the window's sessions with one SQL ``COUNT(*)``.
Goal: median under 10 ms.
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from common import harness
from common.sandbox import jupyter_dirs
from common.server import serving, write_server_config

NAME = "history"
#: The most the default listing or a page may take (seconds, median).
GOAL = 0.050
PAGE = 50
#: The most the adaptive warm pool's read may take (seconds, median).
REFILL_GOAL = 0.010


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (``--quick``: five requests of each)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ended", type=int, default=1000, help="ended sessions in the store")
    parser.add_argument("--repeat", type=int, help="requests of each kind (default 30)")
    parser.add_argument("--quick", action="store_true", help="a small, fast variant")
    args = parser.parse_args(argv)
    args.repeat = args.repeat or (5 if args.quick else 30)
    return args


def fill_store(count: int) -> None:
    """``count`` TERMINATED sessions of this user in the data dir's store."""
    from jupyter_cluster.config import local_owner
    from jupyter_cluster.core.models import LaunchSpec, Session
    from jupyter_cluster.core.naming import DEFAULT_IMAGE, plan_containers
    from jupyter_cluster.core.state import ContainerStatus, SessionStatus
    from jupyter_cluster.engine.store.sessions import Store
    from jupyter_cluster.paths import default_db_path

    Path(default_db_path()).parent.mkdir(parents=True, exist_ok=True)
    store = Store(default_db_path())
    specs = [LaunchSpec.create(image=DEFAULT_IMAGE, size=2, cpu=c) for c in (1, 2, 0.5)]
    start = time.time() - 3600 - count
    try:
        for i in range(count):
            sid = str(uuid.uuid4())
            ended = ContainerStatus.TERMINATED
            store.insert_session(
                Session(
                    id=sid,
                    spec=specs[i % 3],
                    status=SessionStatus.TERMINATED,
                    containers=tuple(
                        c.with_(status=ended, agent="local") for c in plan_containers(sid, 2)
                    ),
                    created_at=start + i,
                    ended_at=start + i + 0.5,
                    owner=local_owner(),
                )
            )
    finally:
        store.close()


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The listings against api/status of the same server."""
    with jupyter_dirs() as root:
        write_server_config(agent_cpu=2.0)
        fill_store(args.ended)
        async with serving(Path(root)) as (server, http, api):

            def get(url: str, count: int | None = None) -> Any:
                async def once() -> float:
                    start = time.perf_counter()
                    async with http.get(url) as response:
                        body = await response.json()
                    seconds = time.perf_counter() - start
                    if response.status != 200 or (count is not None and len(body) != count):
                        raise RuntimeError(f"GET {url}: {response.status}, {len(body)} items")
                    return seconds

                return once

            status = get(server.url + "api/status")
            cases = {
                "GET sessions (active)": (get(api + "sessions", 0), True),
                f"GET sessions?state=ended&limit={PAGE}": (
                    get(api + f"sessions?state=ended&limit={PAGE}", min(PAGE, args.ended)),
                    True,
                ),
                "GET sessions?all=1 (the whole history)": (
                    get(api + "sessions?all=1", args.ended),
                    False,
                ),
            }
            await status()  # warm-up
            rows = []
            for case, (request, goal) in cases.items():
                await request()
                ours, floor = await harness.alternate(args.repeat, request, status)
                row = harness.result(
                    NAME, f"{case}, {args.ended} ended", "seconds", ours, floor, note=""
                )
                if goal:
                    verdict = "met" if row["ours_median"] < GOAL else "MISSED"
                    row["note"] = f"goal: median < {GOAL * 1000:.0f} ms ({verdict})"
                rows.append(row)
        rows.append(await refill_read(args))
    for row in rows:
        print(f"{row['case']}: {row['ours_median'] * 1000:.1f} ms {row['note']}".rstrip())
    return rows


async def refill_read(args: argparse.Namespace) -> dict[str, Any]:
    """The adaptive warm pool's read of the filled store at each refill."""
    from jupyter_cluster.engine.store.sessions import Store
    from jupyter_cluster.paths import default_db_path

    store = Store(default_db_path())
    since = time.time() - 7200 - args.ended  # the whole history is within the window

    def timed(read: Any) -> Any:
        async def once() -> float:
            start = time.perf_counter()
            read()
            return time.perf_counter() - start

        return once

    def count() -> None:
        with store.tx(write=False) as db:
            db.execute("SELECT COUNT(*) FROM sessions WHERE created_at >= ?", (since,)).fetchone()

    try:
        if len(store.recent_launches(since)) != 3:
            raise RuntimeError("the filled store should hold three launch shapes")
        ours, floor = await harness.alternate(
            args.repeat, timed(lambda: store.recent_launches(since)), timed(count)
        )
    finally:
        store.close()
    case = f"adaptive warm pool's read at each refill, {args.ended} ended"
    row = harness.result(NAME, case, "seconds", ours, floor, note="")
    verdict = "met" if row["ours_median"] < REFILL_GOAL else "MISSED"
    row["note"] = f"floor: COUNT(*) of the window; goal: median < 10 ms ({verdict})"
    return row


def main(argv: list[str] | None = None) -> int:
    """Measure, print the table, write ``bench/results/history[_quick].json``."""
    return harness.main_of(NAME, parse_args, run, argv)


if __name__ == "__main__":
    sys.exit(main())
