"""Running commands to the end, finding a free port and whether a process runs, for tests
that drive processes; starting one that Ctrl-C reaches as it would in a terminal."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Result:
    """A finished command: its arguments, exit code and output."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    def __str__(self) -> str:
        return (
            f"$ {' '.join(self.args)}\nexit code {self.returncode}\n"
            f"--- stdout\n{self.stdout}--- stderr\n{self.stderr}"
        )


def run(
    args: tuple[str, ...] | list[str],
    *,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 180,
) -> Result:
    """Run a command to the end and capture its output."""
    proc = subprocess.run(
        list(args), env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout
    )
    return Result(tuple(args), proc.returncode, proc.stdout, proc.stderr)


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (exists and is not a zombie)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def as_from_a_terminal(
    args: Sequence[str], *, env: dict[str, str], cwd: Path
) -> Iterator[subprocess.Popen[str]]:
    """Run ``args`` as a terminal's foreground job would run, for :func:`ctrl_c`: in a
    process group of its own and with SIGINT's default action; killed with its group
    if still running when the block ends. A job a shell starts in the background
    (``cmd &``, as a CI runner may start the suite) has SIGINT ignored, and an ignored
    signal stays ignored across exec: Python then installs no KeyboardInterrupt
    handler, and Ctrl-C would do nothing."""
    proc = subprocess.Popen(
        list(args),
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def ctrl_c(proc: subprocess.Popen[str], timeout: float = 60) -> tuple[str, str]:
    """Press Ctrl-C on a job of :func:`as_from_a_terminal` (SIGINT to its group) and
    wait for it to end; what it printed from then on (stdout, stderr)."""
    os.killpg(proc.pid, signal.SIGINT)
    return proc.communicate(timeout=timeout)
