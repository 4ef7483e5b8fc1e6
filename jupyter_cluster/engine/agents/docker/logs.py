"""Reading Docker's log stream: the request, and the frames of its response as text.

Used by :meth:`~.docker.DockerAgent.logs` (kept apart so the agent stays small).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import json
from collections.abc import AsyncIterator, Mapping

import aiodocker
import aiohttp
from aiodocker.exceptions import DockerError

from .frames import take_frames

#: A read this large means a follower is behind the log (reading a backlog).
CAUGHT_UP = 16 * 1024
#: Bytes found at once after a gather that mean more than a trickle is coming.
BEHIND = 2 * 1024
#: Seconds a read must have waited for Docker to count as at the log's live edge.
WAITED = 0.01
#: Seconds a user's follower that caught up lets new lines gather before reading on
#: (what a followed busy log costs the server; see :func:`log_text`).
FOLLOW_GATHER = 0.2


@contextlib.asynccontextmanager
async def log_response(
    client: aiodocker.Docker, container_id: str, params: Mapping[str, str]
) -> AsyncIterator[aiohttp.ClientResponse]:
    """The response of ``GET containers/{id}/logs``, asked in HTTP/1.0.

    Over HTTP/1.1 Docker sends the log in chunked encoding, one chunk per log
    line, and aiohttp handles each chunk in Python (about 5 µs: a 200,000-line log
    spent a second there). An HTTP/1.0 request gets the body as a plain stream
    read until the connection closes. The request uses ``client``'s connector
    (socket, TLS, SSH) and timeout; errors are aiodocker's :class:`DockerError`.
    """
    await client._check_version()
    url = client._canonicalize_url(f"containers/{container_id}/logs")
    async with (
        aiohttp.ClientSession(
            connector=client.connector,
            connector_owner=False,
            timeout=client._timeout,
            version=aiohttp.HttpVersion10,
        ) as session,
        session.get(url, params=dict(params)) as response,
    ):
        if response.status >= 400:
            body = await response.read()
            try:
                message = json.loads(body)["message"]
            except (ValueError, KeyError, TypeError):
                message = body.decode("utf-8", "replace")
            raise DockerError(response.status, message)
        yield response


async def log_text(
    response: aiohttp.ClientResponse, tty: bool, gather: float = 0.0
) -> AsyncIterator[str]:
    """The text of a ``logs`` response as it arrives: one piece per network read.

    Without a TTY Docker frames every log line (an 8-byte header: stream, length);
    aiodocker's reader awaits twice per frame, which made following a busy log cost
    several microseconds a line. Here the frames of each read are taken apart in
    one pass; at most one incomplete frame is kept between reads (Docker's frames
    are small: long lines arrive in 16 KiB pieces).

    ``gather``: once the follower has caught up with the log, wait that many seconds
    after each read, not reading (see :class:`_Pace`), so a log written a few lines
    at a time is passed on in fewer, larger pieces (each piece costs its reader a
    wake-up and a write to its client); a backlog is read as fast as it comes.
    """
    decoder = codecs.getincrementaldecoder("utf-8")(errors="ignore")
    pending = bytearray()
    pace = _Pace()
    reads = response.content.iter_any().__aiter__()
    loop = asyncio.get_running_loop()
    while True:
        asked = loop.time()
        try:
            data = await reads.__anext__()
        except StopAsyncIteration:
            break
        if tty:
            payload = data
        else:
            pending += data
            payload = take_frames(pending)
        text = decoder.decode(payload)
        if text:
            yield text
        if gather and pace.caught_up(loop.time() - asked, len(data)):
            await _gather(response, gather)
            pace.gathered = True
    rest = decoder.decode(b"", final=True)
    if rest:
        yield rest


class _Pace:
    """Whether a follower has caught up with the log it reads.

    Behind at first (a log's start, or its tail, is read at once). Caught up once
    a read had to wait for Docker to write; behind again when a read taken at once
    after a gather is large (what came during the pause is more than a trickle) or
    any read is a large one.
    """

    def __init__(self) -> None:
        self.behind = True
        #: Whether the reader paused before this read.
        self.gathered = False

    def caught_up(self, waited: float, size: int) -> bool:
        """Account one read (seconds the reader waited for it, its bytes); whether
        to gather before the next."""
        if size >= CAUGHT_UP or (self.gathered and waited < WAITED and size >= BEHIND):
            self.behind = True
        elif waited >= WAITED:
            self.behind = False
        self.gathered = False
        return not self.behind


async def _gather(response: aiohttp.ClientResponse, seconds: float) -> None:
    """Wait ``seconds`` with the connection's reading paused: what Docker writes
    meanwhile waits in the socket and is taken in one read, not one a write.

    Paused and resumed through aiohttp's own flow control (its protocol's
    ``pause_reading``/``resume_reading``), so the two never disagree; not while
    aiohttp holds the connection paused itself.
    """
    connection = response.connection
    protocol = connection.protocol if connection is not None else None
    transport = connection.transport if connection is not None else None
    if protocol is None or transport is None or not transport.is_reading():
        await asyncio.sleep(seconds)
        return
    protocol.pause_reading()
    try:
        await asyncio.sleep(seconds)
    finally:
        if not transport.is_closing():
            protocol.resume_reading()
