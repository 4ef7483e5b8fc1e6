"""``jupyter cluster logs`` on the fast path (:mod:`.quick`): a container's log read
straight from its local engine's socket, in HTTP/1.0, and written in big pieces.

Called by :func:`.quick.answer` once it found nothing to reconcile. It prints what
the engine's ``logs`` prints (:meth:`~jupyter_cluster.engine.reading.SessionReader.logs`
through :func:`~jupyter_cluster.cli.container_commands.logs`): the same lines, split
as :class:`~jupyter_cluster.core.lines.LineSplitter` splits them (without a Python
step per line while no line is too long). The engine answers
instead (:class:`~.quick.Fallback`) for ``--follow``, for a terminal without
``--raw`` (escapes are taken out there), for a session that ended (its log is the
copy kept then) or a container not created yet, and when the engine cannot be read
before anything was printed.
"""

from __future__ import annotations

import argparse
import codecs
import sys
from collections.abc import Sequence
from typing import Any

from ..core.lines import MAX_LINE, LineSplitter
from ..core.state import ENDED, ContainerStatus
from ..engine.agents.docker.light import LightDocker, LightDockerError, log_payload
from ..errors import ClusterError
from .quick_fallback import Fallback


def print_log(
    args: argparse.Namespace, store: Any, agents: Sequence[tuple[Any, LightDocker]]
) -> int:
    """Print the log ``args`` asks for (see the module docstring); the exit code."""
    if args.follow:
        raise Fallback("--follow")
    if not args.raw and sys.stdout.isatty():
        raise Fallback("a terminal: escapes are taken out")
    session = store.resolve(args.session)
    container = session.locate(args.host)
    if session.status in ENDED or container.status is ContainerStatus.TERMINATED:
        raise Fallback(f"session {session.name} is {session.status.value}: its kept log")
    docker = dict((config.id, reader) for config, reader in agents).get(container.agent)
    if not container.container_id or docker is None:
        raise Fallback(f"{args.host} of {session.name} has no container on a local agent")
    try:
        shown = docker.get(f"/containers/{container.container_id}/json")
    except LightDockerError as exc:
        raise Fallback(str(exc)) from None
    tty = bool((shown.get("Config") or {}).get("Tty"))
    tail = "all" if args.tail is None else str(max(args.tail, 0))
    query = {"stdout": "1", "stderr": "1", "follow": "0", "tail": tail}
    out = _Writer()
    decoder = codecs.getincrementaldecoder("utf-8")(errors="ignore")
    lines = _Lines()
    try:
        pieces = docker.stream(f"/containers/{container.container_id}/logs", query)
        for payload in log_payload(pieces, tty):
            out.write(lines.feed(decoder.decode(payload)))
    except LightDockerError as exc:
        if not out.written:
            raise Fallback(str(exc)) from None
        raise ClusterError(f"reading the log of {args.host}: {exc}") from None
    out.write(lines.feed(decoder.decode(b"", final=True)))
    out.write([lines.flush()])
    out.flush()
    return 0


class _Lines:
    """What :class:`~jupyter_cluster.core.lines.LineSplitter` makes of the text fed,
    without a Python step per line while no line is too long: whole lines go out as
    they came, the start of an unfinished one is kept. The first line too long hands
    the rest to a LineSplitter, whose output is the same (it splits a line every
    ``MAX_LINE`` characters from its start, wherever the pieces were cut)."""

    def __init__(self) -> None:
        self.rest = ""
        self.splitter: LineSplitter | None = None

    def feed(self, text: str) -> list[str]:
        if self.splitter is not None:
            return self.splitter.feed(text)
        text = self.rest + text
        if max(map(len, text.split("\n"))) >= MAX_LINE:
            self.rest, self.splitter = "", LineSplitter()
            return self.splitter.feed(text)
        end = text.rfind("\n") + 1
        self.rest = text[end:]
        return [text[:end]]

    def flush(self) -> str:
        return self.splitter.flush() if self.splitter is not None else self.rest


class _Writer:
    """Lines to stdout (its binary buffer when it has one), a big write at a time."""

    LIMIT = 1 << 18

    def __init__(self) -> None:
        self.stream = sys.stdout
        self.pending: list[str] = []
        self.size = 0
        self.written = False

    def write(self, lines: list[str]) -> None:
        for line in lines:
            self.pending.append(line)
            self.size += len(line)
        if self.size >= self.LIMIT:
            self.flush()

    def flush(self) -> None:
        text, self.pending, self.size = "".join(self.pending), [], 0
        if not text:
            return
        self.written = True
        binary = getattr(self.stream, "buffer", None)
        if binary is None:
            self.stream.write(text)
            self.stream.flush()
            return
        self.stream.flush()
        binary.write(text.encode(self.stream.encoding, self.stream.errors or "strict"))
        binary.flush()
