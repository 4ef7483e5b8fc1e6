"""Reading a container's CPU time from its cgroup (``engine.agents.docker.cpu_counter``):
both cgroup versions' counters, and anything else refused (the agent then falls
back to Docker's stats)."""

from __future__ import annotations

import asyncio
import subprocess

import pytest

from jupyter_cluster.engine.agents.docker import cpu_counter
from jupyter_cluster.errors import AgentError


def test_cgroup_v1_nanoseconds_and_v2_microseconds() -> None:
    assert cpu_counter.parse(b"ns 432232825\n") == pytest.approx(0.432232825)
    assert cpu_counter.parse(b"us 1500000\n") == pytest.approx(1.5)


@pytest.mark.parametrize("said", [b"", b"us \n", b"ns -1", b"sh: cat: not found", b"xx 12"])
def test_anything_else_is_refused(said: bytes) -> None:
    with pytest.raises(ValueError):
        cpu_counter.parse(said)


def test_the_script_prints_what_parse_reads() -> None:
    """The script runs under a plain sh: it prints one of the two forms (or a v2
    line with no number, refused) whatever cgroup this machine has."""
    out = subprocess.run(cpu_counter.COMMAND, capture_output=True, timeout=10).stdout
    assert out.split(b" ")[0] in (b"ns", b"us")
    try:
        assert cpu_counter.parse(out) >= 0
    except ValueError:
        assert out.strip() == b"us"  # no cgroup v2 counter here either


async def _after(seconds: float, value: float | BaseException) -> float:
    await asyncio.sleep(seconds)
    if isinstance(value, BaseException):
        raise value
    return value


async def test_the_first_answer_wins_and_a_failed_read_falls_back() -> None:
    assert await cpu_counter.first_of(_after(0.01, 1.0), _after(5, 2.0)) == 1.0
    assert await cpu_counter.first_of(_after(0, ValueError("x")), _after(0.01, 2.0)) == 2.0


async def test_when_both_reads_fail_an_agent_error_says_so() -> None:
    with pytest.raises(AgentError):
        await cpu_counter.first_of(_after(0, ValueError("x")), _after(0, AgentError("gone")))
    with pytest.raises(AgentError):
        await cpu_counter.first_of(_after(0, AgentError("gone")), _after(0.01, ValueError("x")))
