"""Reading Docker's log stream: the frames of a ``logs`` response, as text.

Used by :meth:`~.docker.DockerAgent.logs` (kept apart so the agent stays small).
"""

from __future__ import annotations

import codecs
from collections.abc import AsyncIterator

import aiohttp


async def log_text(response: aiohttp.ClientResponse, tty: bool) -> AsyncIterator[str]:
    """The text of a ``logs`` response as it arrives: one piece per network read.

    Without a TTY Docker frames every log line (an 8-byte header: stream, length);
    aiodocker's reader awaits twice per frame, which made following a busy log cost
    several microseconds a line. Here the frames of each read are taken apart in
    one pass; at most one incomplete frame is kept between reads (Docker's frames
    are small: long lines arrive in 16 KiB pieces).
    """
    decoder = codecs.getincrementaldecoder("utf-8")(errors="ignore")
    pending = bytearray()
    async for data in response.content.iter_any():
        if tty:
            payload = data
        else:
            pending += data
            parts, at, end = [], 0, len(pending)
            while end - at >= 8:
                length = int.from_bytes(pending[at + 4 : at + 8], "big")
                if end - at - 8 < length:
                    break
                parts.append(pending[at + 8 : at + 8 + length])
                at += 8 + length
            del pending[:at]
            payload = b"".join(parts)
        text = decoder.decode(payload)
        if text:
            yield text
    rest = decoder.decode(b"", final=True)
    if rest:
        yield rest
