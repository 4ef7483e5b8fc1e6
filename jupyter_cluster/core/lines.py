"""Splitting a stream of text chunks into lines, in bounded memory and linear time.

Container logs arrive from Docker in chunks of up to ~16 KiB, and a line may be
longer than any chunk (or than memory: a container can print 100 MB without a
newline). :class:`LineSplitter` yields whole lines as they complete, and cuts a
line longer than ``max_line`` characters into pieces of that size, so a reader
(the launcher waiting for "ready", a log stream) never holds more than one
piece. Used by the Docker agent's log reader. :func:`printable` makes a container's
own text safe to quote in a status reason that terminals print.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

#: Characters after which a line without a newline is passed on in pieces.
MAX_LINE = 64 * 1024
#: Terminal escape sequences (CSI, OSC, other ESC sequences), then other control
#: characters but the newline and the tab.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC, to BEL or ST
    r"|\x1b[ -/]*[0-~]"  # other ESC sequences
    r"|\x9b[0-?]*[ -/]*[@-~]"  # CSI in one byte
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` without terminal escape sequences or control characters (newlines and
    tabs stay): container log lines quoted in a failed launch's reason, which the CLI
    prints to whoever runs ``ls``/``show`` (an admin too, in team mode)."""
    return _CONTROLS.sub("", _ESCAPES.sub("", text))


class LineSplitter:
    """Feed chunks with :meth:`feed`; take the rest with :meth:`flush` at the end."""

    def __init__(self, max_line: int = MAX_LINE) -> None:
        self.max_line = max_line
        self._parts: list[str] = []
        self._size = 0

    def feed(self, chunk: str) -> list[str]:
        """The lines (each ending in a newline) that ``chunk`` completes."""
        pieces = chunk.split("\n")
        rest = pieces.pop()  # after the last newline: the start of a line to come
        lines: list[str] = []
        limit = self.max_line
        for text in pieces:
            if not self._parts and len(text) < limit:  # the usual: a whole short line
                lines.append(text + "\n")
                continue
            lines.extend(self._keep(text))
            lines.append("".join(self._parts) + "\n")
            self._parts, self._size = [], 0
        lines.extend(self._keep(rest))
        return lines

    def _keep(self, text: str) -> Iterator[str]:
        while text:
            room = self.max_line - self._size
            self._parts.append(text[:room])
            self._size += min(len(text), room)
            text = text[room:]
            if self._size >= self.max_line:
                yield "".join(self._parts) + "\n"
                self._parts, self._size = [], 0

    def flush(self) -> str:
        """What is left after the last newline ("" when nothing)."""
        rest = "".join(self._parts)
        self._parts, self._size = [], 0
        return rest
