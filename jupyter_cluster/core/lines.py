"""Splitting a stream of text chunks into lines, in bounded memory and linear time.

Container logs arrive from Docker in chunks of up to ~16 KiB, and a line may be
longer than any chunk (or than memory: a container can print 100 MB without a
newline). :class:`LineSplitter` yields whole lines as they complete, and cuts a
line longer than ``max_line`` characters into pieces of that size, so a reader
(the launcher waiting for "ready", a log stream) never holds more than one
piece. Used by the Docker agent's log reader.
"""

from __future__ import annotations

from collections.abc import Iterator

#: Characters after which a line without a newline is passed on in pieces.
MAX_LINE = 64 * 1024


class LineSplitter:
    """Feed chunks with :meth:`feed`; take the rest with :meth:`flush` at the end."""

    def __init__(self, max_line: int = MAX_LINE) -> None:
        self.max_line = max_line
        self._parts: list[str] = []
        self._size = 0

    def feed(self, chunk: str) -> Iterator[str]:
        """The lines (each ending in a newline) that ``chunk`` completes."""
        start = 0
        while True:
            end = chunk.find("\n", start)
            if end < 0:
                yield from self._keep(chunk[start:])
                return
            yield from self._keep(chunk[start:end])
            yield "".join(self._parts) + "\n"
            self._parts, self._size = [], 0
            start = end + 1

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
