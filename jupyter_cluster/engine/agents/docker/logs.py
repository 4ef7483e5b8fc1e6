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

#: A read shorter than this means a follower has caught up with the log.
CAUGHT_UP = 16 * 1024
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

    ``gather``: once a read is small (the follower has caught up with the log),
    wait that many seconds (not reading) before the next, so a log written a few lines at a time
    is passed on in fewer, larger pieces (each piece costs its reader a wake-up and
    a write to its client); a backlog is still read as fast as it comes.
    """
    decoder = codecs.getincrementaldecoder("utf-8")(errors="ignore")
    pending = bytearray()
    async for data in response.content.iter_any():
        if tty:
            payload = data
        else:
            pending += data
            payload = take_frames(pending)
        text = decoder.decode(payload)
        if text:
            yield text
        if gather and len(data) < CAUGHT_UP:
            await _gather(response, gather)
    rest = decoder.decode(b"", final=True)
    if rest:
        yield rest


async def _gather(response: aiohttp.ClientResponse, seconds: float) -> None:
    """Wait ``seconds`` with the connection's reading paused: what Docker writes
    meanwhile waits in the socket and is taken in one read, not one a write."""
    connection = response.connection
    transport = connection.transport if connection is not None else None
    if transport is None or not transport.is_reading():
        await asyncio.sleep(seconds)
        return
    transport.pause_reading()
    try:
        await asyncio.sleep(seconds)
    finally:
        if not transport.is_closing():
            transport.resume_reading()
