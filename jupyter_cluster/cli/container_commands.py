"""The ``jupyter cluster`` commands about a session's containers: ``logs``, ``exec``, ``top``.

:func:`~jupyter_cluster.cli.commands.run` calls these with the engine and the parsed
arguments: a container's log, a command run in one container or in all of them at
once (``exec --all``), and each container's resource use.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any, TextIO

from ..core.fanout import LinePrefixer, worst_exit
from ..core.lines import printable
from ..core.ssh_client import shell_words, split_target
from ..core.state import USABLE
from ..engine.api import Engine
from ..errors import ClusterError, InvalidRequest
from . import format as cli_format
from .records import record_exec


class BatchedOutput:
    """Lines written to a stream in big pieces, flushed once what has arrived is written.

    Writing and flushing each line made printing a 200,000-line log cost a system
    call a line. Lines are kept and written together (encoded once, to the binary
    buffer when there is one) when the event loop next runs, i.e. when the reader
    waits for more (so ``--follow`` shows each line as soon as it came), or once
    :data:`LIMIT` characters are kept.
    """

    #: Characters kept before they are written whatever comes next.
    LIMIT = 1 << 18

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.pending: list[str] = []
        self.size = 0
        self.scheduled = False

    def write(self, text: str) -> None:
        """Keep ``text``; written at the loop's next turn or past the limit."""
        self.pending.append(text)
        self.size += len(text)
        if self.size >= self.LIMIT:
            self.flush()
        elif not self.scheduled:
            self.scheduled = True
            asyncio.get_running_loop().call_soon(self.flush)

    def flush(self) -> None:
        """Write and flush what is kept."""
        self.scheduled = False
        if not self.pending:
            return
        text, self.pending, self.size = "".join(self.pending), [], 0
        binary = getattr(self.stream, "buffer", None)
        if binary is None:
            self.stream.write(text)
            self.stream.flush()
            return
        self.stream.flush()  # anything written as text before goes first
        binary.write(text.encode(self.stream.encoding, self.stream.errors or "strict"))
        binary.flush()


async def logs(engine: Engine[Any], args: argparse.Namespace) -> None:
    """``logs``: print one container's log (its last ``--tail`` lines; ``--follow``);
    on a terminal without ``--raw``, with terminal escapes taken out."""
    clean = not args.raw and sys.stdout.isatty()
    out = BatchedOutput(sys.stdout)
    try:
        async for line in engine.logs(args.session, args.host, tail=args.tail, follow=args.follow):
            out.write(printable(line) if clean else line)
    finally:
        out.flush()


async def top(engine: Engine[Any], args: argparse.Namespace) -> None:
    """One sample (``--json``, ``--once``) or a table refreshed until interrupted."""
    session = await engine.get(args.session)
    while True:
        found = await engine.stats(session.id)
        if args.json:
            print(json.dumps({h: u.to_dict() if u else None for h, u in found.items()}))
            return
        clear = "\x1b[H\x1b[2J" if sys.stdout.isatty() and not args.once else ""
        print(f"{clear}{session.name} {session.id}\n{cli_format.usage_table(found)}", flush=True)
        if args.once:
            return
        await asyncio.sleep(args.interval)


def _exec_command(args: argparse.Namespace) -> list[str]:
    """The command of ``exec``, setting ``args.all`` and ``args.host`` from ``args.rest``:
    ``[--all] [HOST] [--] COMMAND…``, what follows the session (REMAINDER keeps an
    ``--all`` given after the session; argparse drops a ``--`` that comes first).

    Without ``--all``, HOST and COMMAND are split as for ``ssh`` (``split_target``):
    without a HOST the command runs in main1. One word is a command line for the
    container's shell (``shell_words``).
    """
    rest = list(args.rest)
    if rest[:1] == ["--all"]:
        args.all, rest = True, rest[1:]
    if args.all:
        args.host = None
        if rest[:1] == ["--"]:
            rest = rest[1:]
        elif rest[1:2] == ["--"]:  # --all HOST -- CMD
            raise InvalidRequest("give either a HOST or --all, not both", "host")
        command = rest
    else:
        args.host, command = split_target(rest)
    if not command:
        raise InvalidRequest("give a command to run, e.g. -- hostname", "cmd")
    return shell_words(command)


async def _exec_all(engine: Engine[Any], args: argparse.Namespace, cmd: list[str]) -> int:
    session = await engine.get(args.session)
    if session.status not in USABLE:
        raise InvalidRequest(f"session {session.name} is {session.status.value}, not running")
    width = max(len(h) for h in session.hosts)
    out, err = sys.stdout.buffer, sys.stderr.buffer

    async def one(host: str) -> int:
        streams = {1: LinePrefixer(host, width), 2: LinePrefixer(host, width)}

        def write(stream: int, data: bytes) -> None:
            target = err if stream == 2 else out
            target.write(streams[stream].feed(data))
            target.flush()

        try:
            return await engine.exec(session.id, host, cmd, on_output=write)
        except ClusterError as exc:  # one container failing does not stop the others
            write(2, f"{exc}\n".encode())
            return 255
        finally:
            out.write(streams[1].close())
            err.write(streams[2].close())

    record_exec(engine, session, session.hosts, cmd)
    return worst_exit(await asyncio.gather(*(one(h) for h in session.hosts)))


async def exec_in(engine: Engine[Any], args: argparse.Namespace) -> int:
    """``exec``: the command in one container, or in all of them (``--all``); returns
    its exit status (the worst of them with ``--all``)."""
    command = _exec_command(args)
    if args.all:
        return await _exec_all(engine, args, command)

    def write(stream: int, data: bytes) -> None:
        target = sys.stderr.buffer if stream == 2 else sys.stdout.buffer
        target.write(data)
        target.flush()

    session = await engine.get(args.session)
    session.locate(args.host)  # an unknown host is refused before it is recorded
    record_exec(engine, session, [args.host], command)
    return await engine.exec(session.id, args.host, command, on_output=write)
