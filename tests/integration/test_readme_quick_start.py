"""The README's "CLI quick start", run line by line as written there.

Each line runs in bash after ``source .venv/bin/activate`` (the block's first line),
from the clone's root, in a private Jupyter data dir, on the real Docker engine:
what a new user types after ``make lab``. Each line's comment in the README is a
promise (``# prints sub2``); :data:`EXPECTED` holds what each line must print, so a
line changed in the README without this test fails here by name. ``logs … --follow``
follows until the user presses Ctrl-C, so the test sends SIGINT to its process
group once main1's log has said ready, as a terminal would.

No line may print a warning: every launch printed ten lines of cryptography's DSA
deprecation warnings until the key module imported asyncssh through
``jupyter_cluster.sshlib``, and Ctrl-C on ``logs --follow`` said "the launch was
cancelled".
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable

from tests.support.constants import REPO
from tests.support.processes import as_from_a_terminal, ctrl_c
from tests.support.readme import bash_argv, commands_of, ok_in_bash, readme_block

from .support import Workspace

ACTIVATE = "source .venv/bin/activate"
#: What each line of the block must print (stdout), keyed by the line as written.
EXPECTED: dict[str, Callable[[str], bool]] = {
    "jupyter cluster folder create data": lambda out: out.startswith("created data folder data"),
    "jupyter cluster launch --size 3 --cpu 0.5 --mem 512m --mount data --name demo": (
        lambda out: "status    RUNNING" in out and "mounts    data" in out
    ),
    "jupyter cluster ls": lambda out: re.search(r"^\w+\s+demo\s+RUNNING\s", out, re.M) is not None,
    "jupyter cluster exec demo main1 -- ssh sub2 hostname": lambda out: out == "sub2\n",
    "jupyter cluster exec demo -- hostname": lambda out: out == "main1\n",
    "jupyter cluster exec demo sub1 -- env": (
        lambda out: (
            "BACKENDAI_CLUSTER_HOST=sub1\n" in out
            and "BACKENDAI_CLUSTER_HOSTS=main1,sub1,sub2\n" in out
        )
    ),
    "jupyter cluster agents": lambda out: re.search(r"^local\s+default\s", out, re.M) is not None,
    "jupyter cluster rm demo": lambda out: re.fullmatch(r"demo \S+: TERMINATED\n", out) is not None,
}
FOLLOW = "jupyter cluster logs demo sub1 --tail 20 --follow"


def quick_start_lines() -> list[str]:
    """The block's commands, without their comments."""
    lines = commands_of(readme_block("bash", ACTIVATE))
    assert lines[0] == ACTIVATE
    return lines[1:]


def follow_then_ctrl_c(ws: Workspace, line: str) -> subprocess.CompletedProcess[str]:
    """Run the following ``logs`` until it printed sub1's ready line, then Ctrl-C."""
    with as_from_a_terminal(bash_argv(line), env=ws.env, cwd=REPO) as proc:
        assert proc.stdout is not None
        out = []
        for printed in proc.stdout:
            out.append(printed)
            if "jupyter-cluster: ready" in printed:
                break
        rest, err = ctrl_c(proc, timeout=30)
    return subprocess.CompletedProcess(proc.args, proc.returncode, "".join(out) + rest, err)


def test_the_cli_quick_start_works_as_written(ws: Workspace) -> None:
    lines = quick_start_lines()
    assert sorted(lines) == sorted([*EXPECTED, FOLLOW]), "the README's quick start changed"
    try:
        for line in lines:
            run_line(ws, line)
    finally:  # a failed step leaves the session: end it, so only the failure is told
        ws.cli("rm", "demo")
    assert ws.docker_objects() == ([], [])


def run_line(ws: Workspace, line: str) -> None:
    """Run one line of the quick start; assert it did what the README says."""
    if line == FOLLOW:
        done = follow_then_ctrl_c(ws, line)
        assert done.returncode == 130, (line, done)
        assert "jupyter-cluster: ready" in done.stdout, (line, done.stdout)
        assert done.stderr == "jupyter cluster: interrupted\n", (line, done.stderr)
        return
    out = ok_in_bash(line, ws.env, REPO)
    assert EXPECTED[line](out), (line, out)
