"""The connection to one Docker engine: TLS, timeouts, health, and the one error mapping.

Owned by :class:`~jupyter_cluster.engine.agents.docker.DockerAgent`. Every Docker
call of the engine goes through :meth:`DockerConnection.call` (streams, which it
cannot wrap, turn their errors with :meth:`DockerConnection.failure`), which

- bounds it: a connect timeout and a read timeout on every request
  (``ClusterManager.docker_connect_timeout`` / ``docker_timeout``, or the agent's own);
- turns whatever aiodocker, aiohttp or the OS raise into
  :class:`~jupyter_cluster.errors.AgentError` naming the agent and what to check;
- records the agent's health: a call that cannot reach the engine marks the agent
  unavailable (with why and since when); the next call that gets an answer marks
  it available again.

Long streams (followed logs, exec output, which may be silent for hours) use a
second client with no read timeout and a connection pool of their own, so many
log followers never starve the calls everyone else is waiting for. Users' log
reads (REST, CLI, notebooks) have a third client and pool, so however many of
them are open, the engine's own streams (a launch waiting for its containers'
start-up, pulls, events) still get connections (security review X8).
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import Awaitable
from typing import Any, TypeVar

import aiodocker
import aiohttp
from aiodocker.exceptions import DockerError

from ....asyncwait import within
from ....errors import AgentError
from ..base import AgentConfig
from ..host_guard import forget_host

T = TypeVar("T")
#: The status aiodocker gives a DockerError when it could not connect at all.
CANNOT_CONNECT = 900
#: Connections the stream client may hold at once (followed logs, exec output).
STREAM_POOL = 64
#: Connections users' log reads may hold at once, apart from the engine's own streams.
USER_STREAM_POOL = 64
_TRANSPORT_ERRORS = (aiohttp.ClientError, OSError, asyncio.TimeoutError, ValueError)


def ssl_context(config: AgentConfig) -> ssl.SSLContext | None:
    """The client TLS context of ``config`` (its CA, client certificate and key)."""
    if config.tls is None:
        return None
    try:
        context = ssl.create_default_context(cafile=config.tls.ca)
        context.load_cert_chain(config.tls.cert, config.tls.key)
    except (OSError, ssl.SSLError) as exc:
        raise AgentError(
            f"agent {config.id}: cannot load its TLS files ({exc}); check tls.ca, tls.cert "
            "and tls.key in ClusterManager.agents",
            config.id,
        ) from exc
    return context


def engine_url(config: AgentConfig) -> str | None:
    """The URL aiodocker is given: https for TLS agents, None for the local engine."""
    if not config.url:
        return None
    if config.tls is not None and config.url.startswith("tcp://"):
        return "https://" + config.url[len("tcp://") :]
    return config.url


class DockerConnection:
    """Clients of one agent's engine (see the module docstring)."""

    def __init__(self, config: AgentConfig) -> None:
        self.config = config
        self._client: aiodocker.Docker | None = None
        self._stream_client: aiodocker.Docker | None = None
        self._user_stream_client: aiodocker.Docker | None = None
        #: Why the engine could not be reached, and since when (None: it answers).
        self.unavailable: tuple[str, float] | None = None
        #: Whether the engine is a Docker that can freeze when containers of one
        #: network exit together (set by .network_leave once it knows the version).
        self.may_freeze = False

    def _make(self, read_timeout: float | None, limit: int) -> aiodocker.Docker:
        context = ssl_context(self.config)
        url = engine_url(self.config)
        connector: aiohttp.BaseConnector | None = None
        if url and url.startswith(("https://", "tcp://", "http://")):
            connector = aiohttp.TCPConnector(ssl=context if context else False, limit=limit)
        timeout = aiohttp.ClientTimeout(
            total=None, connect=self.config.connect_timeout, sock_read=read_timeout
        )
        return aiodocker.Docker(url=url, connector=connector, timeout=timeout)

    @property
    def client(self) -> aiodocker.Docker:
        """The client for ordinary calls (read timeout on), made inside the running loop."""
        if self._client is None:
            self._client = self._make(self.config.timeout, 100)
        return self._client

    @property
    def stream_client(self) -> aiodocker.Docker:
        """The client for long streams (no read timeout, a pool of its own)."""
        if self._stream_client is None:
            self._stream_client = self._make(None, STREAM_POOL)
        return self._stream_client

    @property
    def user_stream_client(self) -> aiodocker.Docker:
        """The client for users' log reads: like :attr:`stream_client`, with a pool
        apart from the engine's own streams."""
        if self._user_stream_client is None:
            self._user_stream_client = self._make(None, USER_STREAM_POOL)
        return self._user_stream_client

    def failure(self, action: str, exc: BaseException) -> AgentError:
        """The AgentError for ``exc`` raised while doing ``action``; marks health."""
        if isinstance(exc, DockerError) and exc.status == CANNOT_CONNECT:
            exc = ConnectionError(exc.message)
        where = self.config.url or "the local Docker socket"
        if isinstance(exc, DockerError):
            self.unavailable = None  # the engine answered, with an error
            detail = exc.message if isinstance(exc.message, str) else str(exc)
            if not detail.strip():  # what answers is not Docker's API (a wrong port)
                detail = f"HTTP {exc.status} with no message; is {where} a Docker engine's API?"
            return AgentError(f"agent {self.config.id}: {action} failed: {detail}", self.config.id)
        if isinstance(exc, asyncio.TimeoutError | aiohttp.ServerTimeoutError):
            why = (
                f"the Docker engine at {where} did not answer within "
                f"{self.config.timeout:g} s while {action}"
            )
            hint = "is the agent overloaded or frozen? it gets no new containers meanwhile"
            if self.may_freeze:
                hint += (
                    "; its Docker (before 20.10.27) can freeze for good when containers of "
                    "one network exit together (moby/moby#42545): if `docker ps` on that "
                    "host hangs too, restart dockerd there, or upgrade Docker"
                )
        else:
            why = f"cannot reach the Docker engine at {where} ({exc or type(exc).__name__})"
            hint = "start dockerd (make setup does) or fix this agent's url in the configuration"
        if self.unavailable is None:
            self.unavailable = (why, time.time())
        forget_host(self.config.url)  # it may come back with an empty firewall
        return AgentError(f"agent {self.config.id} is unavailable: {why}; {hint}", self.config.id)

    def answered(self) -> None:
        """The engine answered a call: it is available."""
        self.unavailable = None

    async def call(
        self,
        action: str,
        request: Awaitable[T],
        *,
        missing: Any = ...,
        gone: tuple[int, ...] = (404,),
        limit: float | None = None,
    ) -> T:
        """Await one Docker request as ``action`` (see the module docstring).

        With ``missing`` given, Docker's answers ``gone`` (404: no such object)
        return it instead of raising. A whole call is also bounded by ``limit``
        (default: the read timeout plus the connect timeout).
        """
        if limit is None:
            limit = self.config.timeout + self.config.connect_timeout
        try:
            result = await within(request, limit)
        except DockerError as exc:
            if exc.status in gone and missing is not ...:
                self.answered()
                return missing
            raise self.failure(action, exc) from exc
        except _TRANSPORT_ERRORS as exc:
            raise self.failure(action, exc) from exc
        self.answered()
        return result

    async def close(self) -> None:
        """Close both clients (the agent is no longer used)."""
        for client in (self._client, self._stream_client, self._user_stream_client):
            if client is not None:
                await client.close()
                # aiodocker closes only a connector it made itself: ours (tcp://) too.
                connector = getattr(client, "connector", None)
                if connector is not None and not connector.closed:
                    await connector.close()
        self._client = self._stream_client = self._user_stream_client = None
