"""The multi-agent benchmark (``bench/bench_multiagent.py``) in its quick form.

Run on this suite's agents (the ``agents`` fixture) instead of two of its own, so it
costs one launch of each kind rather than a new Swarm: ``run(--quick, cluster=agents)``
launches a size-4 multi-node cluster kernel spread over two agents and the same
bare containers on the same agents, then the same launch taking a warm set spread
over both agents against the floor again, checks that the sessions spanned two agents and
that nothing of either is left on any agent (it fails otherwise), and returns its
rows, which must be well formed and finite. Speed goals are not checked: these are
not timed tests.
"""

from __future__ import annotations

import math

import pytest

from tests.support.constants import REPO

from .agents import AgentCluster

pytestmark = pytest.mark.docker

CASES = {
    "h: launch to ready, size 4 over 2 agents",
    "h: warm launch to ready, size 4 over 2 agents",
    "h: shutdown_kernel, size 4 over 2 agents",
    "h: terminate to gone, size 4 over 2 agents",
}


async def test_the_quick_multiagent_benchmark_runs_on_the_test_agents(
    agents: AgentCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One run of each kind; one well-formed, finite row per case."""
    monkeypatch.syspath_prepend(str(REPO / "bench"))
    import bench_multiagent

    args = bench_multiagent.parse_args(["--quick"])
    rows = await bench_multiagent.run(args, cluster=agents)
    assert {r["case"] for r in rows} == CASES
    for row in rows:
        assert row["bench"] == "multiagent" and len(row["ours"]) == len(row["floor"]) == 1, row
        assert all(math.isfinite(v) and v > 0 for v in row["ours"] + row["floor"]), row
        assert math.isfinite(row["ratio"]) and row["ratio"] > 0, row
    (terminate,) = [r for r in rows if r["case"].startswith("h: terminate")]
    assert terminate["goal"] == 1.2 and isinstance(terminate["met"], bool)
