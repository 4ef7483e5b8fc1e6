"""HTTP to the shared service: the token, timeouts, and its errors as engine errors.

Used by :class:`~jupyter_cluster.client.remote_engine.RemoteEngine` (async calls) and
its store view (blocking calls, made from worker threads). A reply's status maps
back to the error the service raised: 400 → InvalidRequest (with its field),
404 → NotFound, 409 → Conflict, 403 with the service's reason (e.g. only admins
may do that) → Forbidden carrying that reason, 401 or a bare 403 (the token
itself was refused) → ClusterError saying so, anything else or no answer →
AgentError naming the service. No message carries the token. The token is
sent only to an address that only the real service can hold (:mod:`.address`,
checked before every request).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx

from ..errors import AgentError, ClusterError, Conflict, Forbidden, InvalidRequest, NotFound
from .address import check, parse

API = "cluster/api"


def _message(response: httpx.Response) -> tuple[str, str | None]:
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:500] or response.reason_phrase, None
    if isinstance(body, dict):
        return str(body.get("message") or response.reason_phrase), body.get("field")
    return response.reason_phrase, None


def raise_for(response: httpx.Response, url: str) -> None:
    """Raise the engine error a failed reply stands for (nothing for 2xx)."""
    if response.is_success:
        return
    message, field = _message(response)
    status = response.status_code
    if status == 400:
        raise InvalidRequest(message, field)
    if status == 404:
        raise NotFound(message)
    if status == 409:
        raise Conflict(message)
    if status == 403 and message not in ("", response.reason_phrase):
        # a known user refused by a handler, with why: not a token problem
        raise Forbidden(f"the cluster service refused: {message}")
    if status in (401, 403):
        raise ClusterError(
            f"the cluster service at {url} refused this server's token ({status}: {message}); "
            "is JUPYTERHUB_API_TOKEN set and allowed to use the service "
            "(scope access:services!service=cluster)?"
        )
    raise AgentError(f"the cluster service answered {status}: {message}")


class ServiceHTTP:
    """One service: its API's base URL, the token, and an async and a blocking client.

    ``base_url`` is ``ClusterManager.service_url``: ``http+unix://`` (a socket),
    ``https://``, or ``http://`` only with ``allow_http`` (see :mod:`.address`)."""

    def __init__(self, base_url: str, token: str, timeout: float, allow_http: bool = False) -> None:
        self.address = parse(base_url)
        self.allow_http = allow_http
        self.base = self.address.base + API + "/"
        self.headers = {"Authorization": f"token {token}"} if token else {}
        self.timeout = timeout
        self._async: httpx.AsyncClient | None = None
        self._sync: httpx.Client | None = None

    def _unreachable(self, exc: Exception) -> AgentError:
        return AgentError(
            f"cannot reach the cluster service at {self.address.url} "
            f"({exc or type(exc).__name__}); is it running (JupyterHub starts it) and is "
            "ClusterManager.service_url right?"
        )

    @property
    def aclient(self) -> httpx.AsyncClient:
        """The async client (checks the address first: see :mod:`.address`)."""
        check(self.address, self.allow_http)
        if self._async is None:
            uds = self.address.socket
            transport = httpx.AsyncHTTPTransport(uds=uds) if uds else None
            self._async = httpx.AsyncClient(
                headers=self.headers, timeout=self.timeout, transport=transport
            )
        return self._async

    @property
    def client(self) -> httpx.Client:
        """The blocking client (checks the address first: see :mod:`.address`)."""
        check(self.address, self.allow_http)
        if self._sync is None:
            uds = self.address.socket
            transport = httpx.HTTPTransport(uds=uds) if uds else None
            self._sync = httpx.Client(
                headers=self.headers, timeout=self.timeout, transport=transport
            )
        return self._sync

    async def call(self, method: str, path: str, body: Any = None, **params: Any) -> Any:
        """One request; the reply's JSON (None for an empty reply)."""
        url = self.base + path
        try:
            response = await self.aclient.request(
                method, url, json=body, params={k: v for k, v in params.items() if v is not None}
            )
        except httpx.HTTPError as exc:
            raise self._unreachable(exc) from exc
        raise_for(response, self.address.url)
        return response.json() if response.content else None

    def call_sync(self, method: str, path: str, body: Any = None) -> Any:
        """A blocking :meth:`call` (for worker threads, e.g. the events poller)."""
        url = self.base + path
        try:
            response = self.client.request(method, url, json=body)
        except httpx.HTTPError as exc:
            raise self._unreachable(exc) from exc
        raise_for(response, self.address.url)
        return response.json() if response.content else None

    async def lines(self, path: str, **params: Any) -> AsyncIterator[str]:
        """A text reply streamed line by line (logs); no read timeout while following."""
        url = self.base + path
        timeout = httpx.Timeout(self.timeout, read=None)
        try:
            async with self.aclient.stream(
                "GET",
                url,
                params={k: v for k, v in params.items() if v is not None},
                timeout=timeout,
            ) as response:
                if not response.is_success:
                    await response.aread()
                    raise_for(response, self.address.url)
                async for line in response.aiter_lines():
                    yield line + "\n"
        except httpx.HTTPError as exc:
            raise self._unreachable(exc) from exc

    async def close(self) -> None:
        """Close both clients."""
        if self._async is not None:
            await self._async.aclose()
            self._async = None
        if self._sync is not None:
            self._sync.close()
            self._sync = None
