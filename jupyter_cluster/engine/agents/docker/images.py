"""Moving images in and out of one Docker engine: pull from a registry, save, load.

Called by :class:`~.agent.DockerAgent` (``pull_image``, ``save_image``,
``load_image``). All three are long streams, so they use the connection's stream
client (no read timeout, a pool of its own); the caller bounds a whole pull with
``ClusterManager.image_pull_timeout``. Docker reports failures inside the stream
(``errorDetail``), so every message is read and such an answer becomes an
:class:`~jupyter_cluster.errors.AgentError` carrying the registry's words.
Credentials travel only in the ``X-Registry-Auth`` header, never in a message.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import quote

import aiohttp
from aiodocker.exceptions import DockerError

from ....core.images import split_reference
from ....errors import AgentError
from .connection import DockerConnection

#: Called with each progress message of a pull (Docker's JSON, already parsed).
PullCallback = Callable[[Mapping[str, Any]], Awaitable[None] | None]
#: Bytes per piece of a saved image's stream.
CHUNK = 1 << 20
_ERRORS = (DockerError, aiohttp.ClientError, OSError, asyncio.TimeoutError, ValueError)


def auth_header(auth: Mapping[str, str]) -> str:
    """Docker's ``X-Registry-Auth``: the credentials as URL-safe base64 JSON."""
    return base64.urlsafe_b64encode(json.dumps(dict(auth)).encode()).decode()


async def _messages(response: aiohttp.ClientResponse) -> AsyncIterator[dict[str, Any]]:
    """The JSON messages of a streamed answer, one per line; an ``error`` one raises."""
    async for raw in response.content:
        line = raw.strip()
        if not line:
            continue
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict):
            continue
        if message.get("error") or message.get("errorDetail"):
            detail = message.get("errorDetail") or {}
            raise _StreamError(str(detail.get("message") or message.get("error")))
        yield message


class _StreamError(Exception):
    """Docker reported a failure inside a streamed answer."""


def _failure(conn: DockerConnection, action: str, exc: BaseException) -> AgentError:
    if isinstance(exc, _StreamError):
        conn.answered()  # the engine answered: the registry (or the data) failed
        return AgentError(f"agent {conn.config.id}: {action} failed: {exc}", conn.config.id)
    return conn.failure(action, exc)


async def pull(
    conn: DockerConnection,
    image: str,
    auth: Mapping[str, str] | None,
    on_message: PullCallback | None = None,
) -> None:
    """Pull ``image`` into the engine (``POST /images/create``), passing each progress
    message to ``on_message``; raises AgentError with the registry's answer."""
    repository, tag = split_reference(image)
    params = {"fromImage": repository, **({"tag": tag} if tag else {})}
    headers = {"X-Registry-Auth": auth_header(auth)} if auth else {}
    action = f"pulling {image}"
    try:
        query = conn.stream_client._query("images/create", "POST", params=params, headers=headers)
        async with query as response, response:
            conn.answered()
            async for message in _messages(response):
                if on_message is not None:
                    result = on_message(message)
                    if result is not None:
                        await result
    except (*_ERRORS, _StreamError) as exc:
        raise _failure(conn, action, exc) from exc


async def save(conn: DockerConnection, image: str) -> AsyncIterator[bytes]:
    """``image`` as the tar stream ``docker save`` writes (``GET /images/…/get``)."""
    action = f"saving {image}"
    try:
        query = conn.stream_client._query(f"images/{quote(image, safe='')}/get")
        async with query as response, response:
            conn.answered()
            async for piece in response.content.iter_chunked(CHUNK):
                yield piece
    except _ERRORS as exc:
        raise _failure(conn, action, exc) from exc


async def load(conn: DockerConnection, image: str, pieces: AsyncIterator[bytes]) -> None:
    """Load a ``docker save`` stream into the engine (``POST /images/load``), streamed."""
    action = f"loading {image}"
    try:
        query = conn.stream_client._query_chunked_post(
            "images/load",
            "POST",
            params={"quiet": "1"},
            data=pieces,
            headers={"Content-Type": "application/x-tar"},
        )
        async with query as response, response:
            conn.answered()
            async for _ in _messages(response):
                pass
    except (*_ERRORS, _StreamError) as exc:
        raise _failure(conn, action, exc) from exc
