"""Bad CLI input (issue #2: 7, 13): exit code 2, one line on stderr, nothing created.

Each case runs the real CLI against the real Docker engine, then checks that no
container, network or session appeared for this workspace's manager.
"""

from __future__ import annotations

import pytest

from tests.support.constants import SMALL_FLAGS

from .support import Workspace

pytestmark = pytest.mark.docker

CASES = {
    "size 0": ("launch", "--size", "0", *SMALL_FLAGS),
    "size 17": ("launch", "--size", "17", *SMALL_FLAGS),
    "size not a number": ("launch", "--size", "two", *SMALL_FLAGS),
    "unknown mode": ("launch", "--mode", "everywhere", *SMALL_FLAGS),
    "malformed mem": ("launch", "--cpu", "0.25", "--mem", "12xb"),
    "malformed cpu": ("launch", "--cpu", "lots", "--mem", "256m"),
    "shm above memory": ("launch", "--cpu", "0.25", "--mem", "256m", "--shm", "1g"),
    "unknown folder": ("launch", *SMALL_FLAGS, "--mount", "no-such-folder"),
    "folder as a relative path": ("launch", *SMALL_FLAGS, "--mount", "../etc"),
    "folder as an absolute path": ("launch", *SMALL_FLAGS, "--mount", "/etc"),
    "bad mount flag": ("launch", *SMALL_FLAGS, "--mount", "data:rx"),
    # (with pulls off: with them on, it would be pulled, see tests/multihost/test_registry_pulls)
    "image the agent lacks": ("launch", *SMALL_FLAGS, "--image", "jupyter-cluster/no-such-image:0"),
    "image name in upper case": ("launch", *SMALL_FLAGS, "--image", "Jupyter-Cluster/Kernel"),
    "image with an empty tag": ("launch", *SMALL_FLAGS, "--image", "jupyter-cluster/kernel:"),
    "image with an empty name part": ("launch", *SMALL_FLAGS, "--image", "jupyter-cluster//kernel"),
    "pull of no image reference": ("image", "pull", "Bad:x"),
    "build of no image reference": ("image", "build", "--tag", "bad tag"),
    "never fits": ("launch", "--size", "2", "--cpu", "4096", "--mem", "256m"),
    "unknown resource group": ("launch", *SMALL_FLAGS, "--resource-group", "nowhere"),
    "no-wait with bad input": ("launch", "--size", "0", *SMALL_FLAGS, "--no-wait"),
    "unknown option": ("launch", "--sizes", "2"),
    "show unknown session": ("show", "no-such-session"),
    "rm unknown session": ("rm", "no-such-session"),
    "exec unknown session": ("exec", "no-such-session", "main1", "--", "true"),
    "logs unknown session": ("logs", "no-such-session", "main1"),
    "exec without a command": ("exec", "no-such-session", "main1"),
}


@pytest.mark.parametrize("args", list(CASES.values()), ids=list(CASES))
def test_bad_input_exits_2_with_one_line_and_creates_nothing(
    ws: Workspace, args: tuple[str, ...]
) -> None:
    ws.ok_cli("folder", "create", "data")  # so that only the flag makes "data:rx" wrong
    ws.write_config("c.ClusterManager.pull_images = False\n")  # no pull from the internet
    result = ws.cli(*args)
    assert result.returncode == 2, str(result)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, str(result)
    assert lines[0].startswith("jupyter cluster: error: "), str(result)
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
    assert ws.docker_objects() == ([], [])
    store = ws.store()
    try:
        assert store.list(include_ended=True) == []
    finally:
        store.close()
