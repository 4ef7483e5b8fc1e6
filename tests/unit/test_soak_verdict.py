"""The soak benchmark's verdict on open fds (``bench/bench_soak.py``): a growth that
stays breaks the bound and names the kinds of fds that grew; one that closed by the
settled sample (idle keep-alive connections to Docker) does not."""

from __future__ import annotations

import sys
from typing import Any

from tests.support.constants import REPO

sys.path.insert(0, str(REPO / "bench"))
import bench_soak

ARGS = bench_soak.parse_args(["--cycles", "2"])


def sample(fds: int, **kinds: int) -> dict[str, Any]:
    base = {"rss_mb": 100.0, "threads": 3, "children": 0, "volumes_left": []}
    counts = {"containers": 0, "networks": 0, "volumes": 0}
    return {**base, **counts, "cycle": 1, "fds": fds, "fd_kinds": kinds}


def test_a_growth_that_stays_is_broken_and_says_what_grew() -> None:
    base = sample(16, pipe=2, unix=14)
    last = sample(23, pipe=2, unix=21)
    settled = {"fds": 23, "fd_kinds": {"pipe": 2, "unix": 21}, "waited": 40.0}
    judged = bench_soak.verdict([base, last], base, ARGS, settled)
    assert judged["summary"]["fd_growth"] == 7
    assert judged["violations"] == ["open fds grew by 7 (bound 5): unix +7"]


def test_connections_closed_by_the_settled_sample_are_no_growth() -> None:
    base = sample(16, unix=16)
    last = sample(25, unix=25)
    settled = {"fds": 15, "fd_kinds": {"unix": 15}, "waited": 18.2}
    judged = bench_soak.verdict([base, last], base, ARGS, settled)
    assert judged["violations"] == []
    assert judged["summary"]["fd_growth"] == -1
    assert judged["summary"]["fd_settle_seconds"] == 18.2
    assert judged["summary"]["fd_max"] == 25  # the per-cycle peak is still reported
