"""Docker's framing of a container's output without a TTY: every piece comes as an
8-byte header (stream, big-endian length) and its bytes.

Standard library only: the engine's log reader (:mod:`.logs`) and the CLI's fast
path (:mod:`.light`, which must not import the engine's HTTP client) both take
their reads apart with :func:`take_frames`.
"""

from __future__ import annotations


def take_frames(pending: bytearray) -> bytes:
    """The payload of every whole frame at the start of ``pending``, joined; those
    frames are removed from it and a partial one is left for the next read."""
    parts, at, end = [], 0, len(pending)
    while end - at >= 8:
        length = int.from_bytes(pending[at + 4 : at + 8], "big")
        if end - at - 8 < length:
            break
        parts.append(pending[at + 8 : at + 8 + length])
        at += 8 + length
    del pending[:at]
    return b"".join(parts)
