"""One command on every container at once (``exec --all``): prefixed lines, the worst exit.

Used by the CLI (``jupyter cluster exec ID --all -- CMD``) and the notebook's
``%cluster exec SESSION --all -- CMD``: each container's output comes back as
whole lines prefixed with its host (``sub1: …``), as pdsh prints them, so
outputs of concurrent commands never interleave within a line; the exit status
is the worst of them.
"""

from __future__ import annotations

from collections.abc import Iterable


class LinePrefixer:
    """Turns one host's output chunks into whole lines prefixed ``"<host>: "``."""

    def __init__(self, host: str, width: int = 0) -> None:
        self.prefix = f"{host}:".ljust(width + 1).encode() + b" "
        self._partial = b""

    def feed(self, data: bytes) -> bytes:
        """The complete lines ``data`` finishes, prefixed; keeps the unfinished rest."""
        data = self._partial + data
        head, sep, self._partial = data.rpartition(b"\n")
        if not sep:  # no line finished yet: all of it waits in _partial
            return b""
        return b"".join(self.prefix + line + b"\n" for line in head.split(b"\n"))

    def close(self) -> bytes:
        """The last, unterminated line (if any), prefixed and ended."""
        rest, self._partial = self._partial, b""
        return self.prefix + rest + b"\n" if rest else b""


def worst_exit(codes: Iterable[int]) -> int:
    """The exit status of a fan-out: 0 if every command succeeded, else the highest
    failing status (a signal's negative status counts as 128 + its number)."""
    failing = [c if c > 0 else 128 - c for c in codes if c != 0]
    return max(failing, default=0)
