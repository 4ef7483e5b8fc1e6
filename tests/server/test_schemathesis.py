"""Property-based run of schemathesis against the live server's OpenAPI document.

schemathesis (its CLI, in a subprocess, while pytest-jupyter's server serves)
generates requests for every operation but the endless events stream, valid and
invalid, and checks that none gets a 500 and that statuses, content types and
bodies conform to the document. Limits are small, so the sessions it manages to
launch are tiny and few (two at most); the ``cluster`` fixture removes them.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from .support import jp_async

pytestmark = pytest.mark.docker
CHECKS_SKIPPED = ",".join(
    [
        "missing_required_header",  # the server answers 403, not 401, like all of Jupyter's API
        "ignored_auth",  # the login cookie of earlier responses authenticates too
        "positive_data_acceptance",  # valid-looking input can still be refused (names, quotas)
        "use_after_free",  # an ended session stays readable (history)
        "ensure_resource_availability",
    ]
)


@pytest.fixture
def cluster_config() -> dict[str, Any]:
    return {
        "ClusterApp": {
            "max_cpu": 0.25,
            "max_mem": "256m",
            "max_shm": "64m",
            "max_sessions_per_user": 2,
        },
        "ClusterManager": {"max_size": 2},
    }


@jp_async
async def test_schemathesis_finds_no_server_error(
    http_server: Any,  # serve the test server on jp_http_port
    jp_http_port: int,
    jp_base_url: str,
    jp_auth_header: Any,
    tmp_path: Path,
    cluster: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cluster.engine.folders_for("").create("data")
    token = jp_auth_header["Authorization"]
    url = f"http://127.0.0.1:{jp_http_port}{jp_base_url}cluster/api/openapi.json"
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "schemathesis.cli",
        "run",
        url,
        "--header",
        f"Authorization: {token}",
        "--checks",
        "all",
        "--exclude-checks",
        CHECKS_SKIPPED,
        "--exclude-path",
        "/events",
        "--max-examples",
        "40",
        "--workers",
        "1",
        "--request-timeout",
        "60",
        "--generation-database",
        "none",
        "--no-color",
        cwd=tmp_path,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 600)
    report = out.decode(errors="replace")
    with capsys.disabled():
        print(f"\ntest_schemathesis_finds_no_server_error: {cases_tried(report)}")
    assert proc.returncode == 0, report
    assert "Server error" not in report
    counts = re.search(r"Operations:\s+(\d+) selected / (\d+) total", report)
    assert counts is not None, report
    selected, total = int(counts[1]), int(counts[2])
    assert selected == total - 1 and f"Tested: {selected}" in report, report  # all but /events


def cases_tried(report: str) -> str:
    """The counts of schemathesis's summary: the line after "Test cases:" (how many
    were generated, passed, failed), or a note that the report has none."""
    lines = [line.strip() for line in report.splitlines()]
    for heading, counts in itertools.pairwise(lines):
        if heading == "Test cases:":
            return f"schemathesis tried {counts}"
    return "schemathesis printed no count of test cases"
