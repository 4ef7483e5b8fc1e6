"""Throwaway root helpers (the guard of session bridges, egress rules) on real Docker.

A helper's exit code and output come back to the engine, and Docker removes the
helper once it ends: an engine killed while its helper runs (a CLI interrupted
mid-launch) leaves nothing behind, where before the helper stayed, exited, until
someone removed it by hand. One killed between creating its helper and starting it
leaves it created, which Docker keeps: the next engine's helper run removes it.
"""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.support.agent_contract import docker_side
from tests.support.constants import IMAGE
from tests.support.docker import container_exists, docker, helper_left, labelled

pytestmark = pytest.mark.docker

#: An engine: runs the script argv[3] in a helper of image argv[5] on the host's
#: network, labelled argv[1]=argv[2], through a DockerAgent built as the engine builds
#: it (data folder argv[4]); prints "started" first.
ENGINE = """
import asyncio, sys
from pathlib import Path
from tests.support.agent_contract import docker_side

async def main():
    agent = docker_side(Path(sys.argv[4])).agent
    print("started", flush=True)
    await agent.run_on_host(sys.argv[5], sys.argv[3], (), {sys.argv[1]: sys.argv[2]})

asyncio.run(main())
"""
LABEL = "jupyter-cluster.test-helper"


def running(label: str) -> list[str]:
    """Ids of the running containers carrying ``label``: a helper only created is
    not yet running, and an engine killed before its start leaves it created."""
    found = docker("ps", "-q", "--filter", f"label={label}", "--filter", "status=running")
    return found.stdout.split()


async def test_a_helpers_exit_code_and_output_come_back(tmp_path: Path) -> None:
    side = docker_side(tmp_path)
    value = uuid.uuid4().hex
    try:
        script = "echo on stdout; echo on stderr >&2; exit 3"
        code, output = await side.agent.run_on_host(IMAGE, script, (), {LABEL: value})
        assert code == 3
        assert "on stdout" in output and "on stderr" in output
        assert labelled(f"{LABEL}={value}") == ([], [])  # removed when it ended
    finally:
        await side.close()


def test_a_helper_of_an_engine_killed_while_it_runs_is_removed(tmp_path: Path) -> None:
    value = uuid.uuid4().hex
    argv = [sys.executable, "-c", ENGINE, LABEL, value, "sleep 2", str(tmp_path), IMAGE]
    root = Path(__file__).resolve().parents[2]
    engine = subprocess.Popen(argv, cwd=root, stdout=subprocess.PIPE, text=True)
    try:
        assert engine.stdout is not None and engine.stdout.readline().strip() == "started"
        deadline = time.monotonic() + 30
        while not running(f"{LABEL}={value}"):  # its helper runs (not only created)
            assert time.monotonic() < deadline, "the helper never started"
            time.sleep(0.05)
        engine.kill()
        engine.wait(10)
        # Counted from the kill: under a loaded engine the helper's start may take most
        # of the first deadline, and its 2 s script and removal come after it.
        gone_by = time.monotonic() + 30
        while labelled(f"{LABEL}={value}")[0]:  # removed once its script ends
            assert time.monotonic() < gone_by, "the helper was left behind"
            time.sleep(0.2)
    finally:
        if engine.poll() is None:
            engine.kill()
            engine.wait()
        left, _ = labelled(f"{LABEL}={value}")
        if left:
            subprocess.run(["docker", "rm", "-f", *left], check=False, capture_output=True)


def test_a_helper_left_created_is_removed_by_the_next_engines_helper(tmp_path: Path) -> None:
    value = uuid.uuid4().hex
    stale = helper_left({LABEL: value}, time.time() - 600, ran=False)
    recent = helper_left({LABEL: value}, time.time(), ran=False)
    try:
        argv = [sys.executable, "-c", ENGINE, LABEL, value, "true", str(tmp_path), IMAGE]
        root = Path(__file__).resolve().parents[2]
        done = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert not container_exists(stale)
        assert container_exists(recent)  # another engine may be about to start it
        # The engine's own helper was removed when it ended: only `recent` is left.
        assert labelled(f"{LABEL}={value}")[0] == [recent]
    finally:
        docker("rm", "-f", stale, recent, check=False)
