"""``%cluster`` inside a cluster container (main1): hosts, status, logs, exec.

Self-contained (standard library and IPython only): the engine copies this file
into every container as ``jupyter_cluster/__init__.py`` on a private PYTHONPATH,
and the provisioner loads it as an IPython extension in the kernel. It assumes
no path to the Jupyter server: everything goes over the cluster's own SSH, and
logs are read from the copy the start-up script keeps of the container's log.
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import shlex
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import IO, Any, NoReturn

LOG_FILE = "/opt/jupyter-cluster/container.log"
#: The host ``logs`` and ``exec`` mean without one, as the CLI's do (naming.MAIN_HOST).
MAIN_HOST = "main1"
#: A word that names a container (core.ssh_client.HOST_RE).
HOST_RE = re.compile(r"(main|sub)[0-9]+")
USAGE = """%cluster hosts                         the session's containers and whether they answer
%cluster status                        one line about the session
%cluster logs [HOST] [--tail N] [--follow]   a container's log (start-up, bootstrap, sshd,
                                       kernel); main1's without HOST
%cluster exec [HOST] -- CMD…           run a command in a container (main1 without HOST)
%cluster exec --all -- CMD…            … in every container at once (lines prefixed)"""


class MagicError(Exception):
    """A wrong ``%cluster`` line; shown as one line, never as a traceback."""


class MagicParser(argparse.ArgumentParser):
    """An argument parser that raises :class:`MagicError` (with ``usage_text``)
    instead of exiting; shared with the host-side magic."""

    usage_text = USAGE

    def error(self, message: str) -> NoReturn:
        raise MagicError(f"{message}\n{self.usage_text}")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise MagicError(message or self.usage_text)


class _Parser(MagicParser):
    usage_text = USAGE


def cluster_hosts() -> list[str]:
    """All host names of this session, main1 first."""
    return [h for h in os.environ.get("BACKENDAI_CLUSTER_HOSTS", "").split(",") if h]


def this_host() -> str:
    return os.environ.get("BACKENDAI_CLUSTER_HOST", "")


def split_target(words: list[str]) -> tuple[str, list[str]]:
    """``[HOST] [--] CMD…`` of ``exec``, by the CLI's rule (core.ssh_client's
    ``split_target``; this file imports nothing of the package): a first word
    followed by ``--`` is the host even when it names no container (a typo is refused,
    not run), as is a first word naming one; else the words are a command for main1."""
    if words[1:2] == ["--"]:
        return words[0], words[2:]
    host, rest = MAIN_HOST, words
    if rest and HOST_RE.fullmatch(rest[0]):
        host, rest = rest[0], rest[1:]
    return host, rest[1:] if rest[:1] == ["--"] else rest


def shell_words(command: list[str]) -> list[str]:
    """One word is a command line for the shell, as with ``ssh`` and pdsh; several
    are a program and its arguments (the CLI's rule: core.ssh_client.shell_words); a
    blank command line is refused."""
    if len(command) == 1 and not command[0].strip():
        raise MagicError("give a command: %cluster exec [HOST] -- CMD")
    return ["sh", "-c", command[0]] if len(command) == 1 else command


def _command_on(host: str, argv: list[str]) -> list[str]:
    if host not in cluster_hosts():
        raise MagicError(f"no host {host!r} in this session; hosts: {', '.join(cluster_hosts())}")
    if host == this_host():
        return argv
    return ["ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=5", host, shlex.join(argv)]


def _pump(source: IO[str], target: Any) -> None:
    for line in source:
        target.write(line)
        target.flush()


def run_on(host: str, argv: list[str]) -> int:
    """Run ``argv`` on ``host`` (locally or over SSH), streaming stdout and stderr."""
    proc = subprocess.Popen(
        _command_on(host, argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stderr is not None
    err = threading.Thread(target=_pump, args=(proc.stderr, sys.stderr), daemon=True)
    err.start()
    try:
        _pump(proc.stdout, sys.stdout)
        code = proc.wait()
    except KeyboardInterrupt:  # interrupting the kernel stops --follow
        proc.terminate()
        code = proc.wait()
    err.join(timeout=2)
    return code


def _prefixed(source: IO[str], target: Any, prefix: str, lock: threading.Lock) -> None:
    for line in source:
        with lock:  # whole lines only: concurrent hosts never mix within one
            target.write(prefix + (line if line.endswith("\n") else line + "\n"))
            target.flush()


def run_everywhere(argv: list[str]) -> int:
    """Run ``argv`` on every host at once (pdsh-like): each output line prefixed with
    its host; the exit status is the worst (0 only if all succeeded)."""
    hosts = cluster_hosts()
    width = max(len(h) for h in hosts)
    lock = threading.Lock()

    def one(host: str) -> int:
        prefix = f"{host}:".ljust(width + 1) + " "
        proc = subprocess.Popen(
            _command_on(host, argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        assert proc.stdout is not None and proc.stderr is not None
        err = threading.Thread(target=_prefixed, args=(proc.stderr, sys.stderr, prefix, lock))
        err.start()
        _prefixed(proc.stdout, sys.stdout, prefix, lock)
        err.join()
        return proc.wait()

    with ThreadPoolExecutor(max_workers=len(hosts)) as pool:
        codes = list(pool.map(one, hosts))
    failing = [c if c > 0 else 128 - c for c in codes if c != 0]
    return max(failing, default=0)


def _answers(host: str) -> bool:
    if host == this_host():
        return True
    argv = ["ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=3", host, "true"]
    return subprocess.run(argv, capture_output=True, timeout=10).returncode == 0


def host_status() -> list[tuple[str, str, str]]:
    """(host, role, "up" or "unreachable") for every host, checked concurrently."""
    hosts = cluster_hosts()
    with ThreadPoolExecutor(max_workers=max(1, len(hosts))) as pool:
        up = list(pool.map(_answers, hosts))
    return [
        (h, "main" if h.startswith("main") else "sub", "up" if ok else "unreachable")
        for h, ok in zip(hosts, up)
    ]


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="%cluster", add_help=False)
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    sub.add_parser("hosts", add_help=False)
    sub.add_parser("status", add_help=False)
    logs = sub.add_parser("logs", add_help=False)
    logs.add_argument("host", nargs="?", default=MAIN_HOST)
    logs.add_argument("--tail", type=int, default=None)
    logs.add_argument("--follow", "-f", action="store_true")
    sub.add_parser("exec", add_help=False)  # its words: split_target
    return parser


def run(argv: list[str]) -> int:
    """Carry out one ``%cluster`` line; returns an exit code."""
    if not cluster_hosts():
        raise MagicError("this kernel does not run in a cluster session")
    if argv[:2] == ["exec", "--all"]:
        command = argv[3:] if argv[2:3] == ["--"] else argv[2:]
        if not command:
            raise MagicError("give a command: %cluster exec --all -- CMD")
        return run_everywhere(shell_words(command))
    if argv[:1] == ["exec"]:  # not argparse, which drops the "--" that says HOST
        host, command = split_target(argv[1:])
        if not command:
            raise MagicError("give a command: %cluster exec [HOST] -- CMD")
        return run_on(host, shell_words(command))
    args = _parser().parse_args(argv)
    if args.command is None:
        raise MagicError(USAGE)
    if args.command == "hosts":
        rows = host_status()
        width = max(len(h) for h, _, _ in rows)
        print(f"{'HOST'.ljust(width)}  ROLE  STATUS")
        for host, role, status in rows:
            print(f"{host.ljust(width)}  {role.ljust(4)}  {status}")
        return 0
    if args.command == "status":
        rows = host_status()
        down = [h for h, _, s in rows if s != "up"]
        env = os.environ
        print(
            f"session {env.get('BACKENDAI_SESSION_ID', '?')} ({env.get('BACKENDAI_CLUSTER_MODE')}, "
            f"size {env.get('BACKENDAI_CLUSTER_SIZE')}): "
            + (f"unreachable: {', '.join(down)}" if down else f"all {len(rows)} containers up")
        )
        return 0
    # logs
    if args.tail is not None and args.tail < 0:
        raise MagicError("--tail takes a number of lines, 0 or more")
    tail = ["tail", "-n", str(args.tail)] if args.tail is not None else ["tail", "-n", "+1"]
    return run_on(args.host, [*tail, *(["-f"] if args.follow else []), LOG_FILE])


def cluster_magic(line: str) -> None:
    """The ``%cluster`` line magic."""
    try:
        code = run(shlex.split(line))
    except (MagicError, ValueError) as exc:
        print(f"%cluster: {exc}", file=sys.stderr)
        return
    if code:
        print(f"%cluster: exit code {code}", file=sys.stderr)


#: What the kernel's folder lacks (not the notebook's, or read-only; set by the provisioner,
#: jupyter_cluster/provisioning/workdir.py).
WORKDIR_NOTE_ENV = "JUPYTER_CLUSTER_WORKDIR_NOTE"


def show_note_first(ipython: Any, note: str) -> None:
    """Show ``note`` as the first output of the kernel's first cell (at start-up no
    client listens yet), as plain text, then never again."""
    shown = False

    def before_first_cell(*_: Any) -> None:
        nonlocal shown
        if shown:
            return
        shown = True
        from IPython.display import display

        display({"text/plain": f"jupyter-cluster: {note}"}, raw=True)

    ipython.events.register("pre_run_cell", before_first_cell)


#: "0" (set by the provisioner, its ``gc_freeze_startup`` off) leaves the kernel's
#: garbage collector as it is (see :func:`freeze_startup_objects`).
GC_FREEZE_ENV = "JUPYTER_CLUSTER_GC_FREEZE"


def freeze_startup_objects() -> None:
    """Move every object the kernel's start-up made (IPython, ipykernel and what they
    import: most of the process's objects, which live as long as it does) into
    Python's permanent generation (``gc.freeze``). Collections then no longer walk
    them, nor does the interpreter's exit, which was most of a shutdown: 0.3 CPU
    seconds, 0.6 s at 0.5 CPU, down to about 0.04 s. What user code makes later is
    collected as before (and at exit: its files are flushed, its ``__del__`` runs)."""
    if os.environ.pop(GC_FREEZE_ENV, "1") != "0":
        gc.freeze()


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext jupyter_cluster`` inside a cluster container (the provisioner loads
    it in every kernel, once the kernel's start-up imports are done)."""
    freeze_startup_objects()
    ipython.register_magic_function(cluster_magic, magic_kind="line", magic_name="cluster")
    note = os.environ.pop(WORKDIR_NOTE_ENV, "")
    if note:
        show_note_first(ipython, note)
