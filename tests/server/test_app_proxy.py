"""Web apps in main1 through the server's app proxy (``cluster/proxy/{session}/{port}/``).

A real session, a real web app with a WebSocket started in its main1 (a small
tornado app, tornado being in the kernel image for ipykernel), and the real
Jupyter server with the extension: the page comes back through the proxy (the
prefix removed, or kept in the ``proxy-absolute`` form), a POST and a WebSocket
echo, the client's Jupyter token is not passed on to the app, another user gets
404 and an unauthenticated client 403, a port nobody listens on is a 502 page
that says so, a bad port is a 400, and nothing more than SSH is published by main1.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any
from urllib.parse import unquote

import pytest
from tornado.httpclient import AsyncHTTPClient, HTTPRequest, HTTPResponse
from tornado.websocket import websocket_connect

from tests.support.waiting import eventually

from .support import jp_async, ok_http, wait_status
from .test_owners import ALICE, BOB, TokenUsers

pytestmark = pytest.mark.docker

APP_PORT = 8765
#: A page and a WebSocket echo on APP_PORT, bound to main1's loopback only.
APP = f"""
import asyncio, tornado.ioloop, tornado.web, tornado.websocket

class Page(tornado.web.RequestHandler):
    def get(self, path):
        auth = self.request.headers.get("Authorization", "")
        self.write("<html><body><h1 id='app'>hello from main1</h1>"
                   f"<p id='path'>path={{path}} query={{self.request.query}}</p>"
                   f"<p id='auth'>auth={{auth}}</p>"
                   "<p id='echo'>waiting</p><script>"
                   "const ws = new WebSocket(location.href.replace(/^http/, 'ws')"
                   ".replace(/[^/]*$/, 'ws'));"
                   "ws.onopen = () => ws.send('ping');"
                   "ws.onmessage = e => document.getElementById('echo').textContent = e.data;"
                   "</script></body></html>")

    def post(self, path):
        self.write("posted:" + self.request.body.decode())

class Slow(tornado.web.RequestHandler):
    async def get(self):
        self.write("first;")
        await self.flush()
        await asyncio.sleep(3)
        self.write("second")

class Echo(tornado.websocket.WebSocketHandler):
    def on_message(self, message):
        self.write_message("echo:" + message)

tornado.web.Application([(r".*/ws", Echo), (r".*/slow", Slow), (r"(.*)", Page)]).listen(
    {APP_PORT}, address="127.0.0.1")
tornado.ioloop.IOLoop.current().start()
"""


@pytest.fixture
def cluster_config() -> dict[str, Any]:
    return {"ServerApp": {"identity_provider_class": TokenUsers}}


async def start_app(cluster: Any, sid: str) -> None:
    """Start :data:`APP` in main1 in the background (its log in /tmp/app.log)."""
    script = 'nohup python3 -c "$0" >/tmp/app.log 2>&1 &'
    code = await cluster.engine.exec(sid, "main1", ["sh", "-c", script, APP])
    assert code == 0


async def fetch(url: str, headers: dict[str, str] | None = None, **kw: Any) -> HTTPResponse:
    request = HTTPRequest(url, headers=headers or {}, follow_redirects=False, **kw)
    return await AsyncHTTPClient().fetch(request, raise_error=False)


@jp_async
async def test_app_in_main1_through_the_proxy(
    jp_fetch: Any, jp_http_port: int, jp_base_url: str, cluster: Any
) -> None:
    body = {"apps": {"echo": APP_PORT}}
    session = await ok_http(jp_fetch, "sessions", method="POST", body=body, headers=ALICE)
    sid = session["id"]
    assert session["apps"] == {"echo": APP_PORT}  # declared at launch, listed by the session
    await wait_status(jp_fetch, sid, "RUNNING", headers=ALICE)
    await start_app(cluster, sid)
    root = f"http://127.0.0.1:{jp_http_port}{jp_base_url}cluster/proxy/{sid}"
    app = f"{root}/{APP_PORT}/"

    async def answers() -> HTTPResponse | None:
        reply = await fetch(app + "page?x=1", ALICE)
        return reply if reply.code == 200 else None

    page = await eventually(answers, 30, "the app in main1 through the proxy")
    text = page.body.decode()
    assert "hello from main1" in text
    assert "path=/page query=x=1" in text  # the prefix is removed, the query kept
    assert "alice-token" not in text  # Jupyter's credentials stay with Jupyter
    assert page.headers["Content-Type"].startswith("text/html")

    absolute = f"http://127.0.0.1:{jp_http_port}{jp_base_url}cluster/proxy-absolute/{sid}"
    kept = (await fetch(f"{absolute}/{APP_PORT}/deep/x", ALICE)).body.decode()
    assert f"path={unquote(jp_base_url)}cluster/proxy-absolute/{sid}/{APP_PORT}/deep/x" in kept

    slashless = await fetch(f"{root}/{APP_PORT}", ALICE)
    assert slashless.code == 302
    assert slashless.headers["Location"].endswith(f"/{APP_PORT}/")

    # a reply the app streams reaches the client as it comes, not when it ends
    start, arrived = time.monotonic(), []
    slow = await fetch(
        app + "slow", ALICE, streaming_callback=lambda c: arrived.append((time.monotonic(), c))
    )
    assert slow.code == 200 and b"".join(c for _, c in arrived) == b"first;second"
    assert arrived[0][0] - start < 2 and arrived[-1][0] - start >= 3, arrived

    posted = await fetch(app + "form", ALICE, method="POST", body="a=1")
    assert (posted.code, posted.body) == (200, b"posted:a=1")

    ws_url = app.replace("http://", "ws://") + "ws"
    ws = await websocket_connect(HTTPRequest(ws_url, headers=ALICE))
    try:
        for word in ("one", "two"):
            await ws.write_message(word)
            assert await asyncio.wait_for(ws.read_message(), 10) == f"echo:{word}"
    finally:
        ws.close()

    # another user: the session does not exist for them; no credentials: refused
    assert (await fetch(app, BOB)).code == 404
    assert (await fetch(app)).code == 403
    for headers in (BOB, {}):
        with pytest.raises(Exception) as refused:
            await websocket_connect(HTTPRequest(ws_url, headers=headers))
        assert getattr(refused.value, "code", None) in (403, 404), refused.value

    closed = await fetch(f"{root}/{APP_PORT + 1}/", ALICE)
    assert closed.code == 502
    assert f"Nothing listens on port {APP_PORT + 1} in main1" in closed.body.decode()
    with pytest.raises(Exception) as no_ws:
        await websocket_connect(
            HTTPRequest(
                f"ws://{ws_url[5:]}".replace(f"/{APP_PORT}/", f"/{APP_PORT + 1}/"), headers=ALICE
            )
        )
    assert getattr(no_ws.value, "code", None) == 502, no_ws.value

    for bad in ("abc", "0", "65536", "-1"):
        reply = await fetch(f"{root}/{bad}/", ALICE)
        assert reply.code == 400, (bad, reply.code)
        assert "port" in reply.body.decode()

    # main1 publishes its SSH port only: the app is reached over that connection
    inspect = await asyncio.create_subprocess_exec(
        "docker",
        "inspect",
        "--format",
        "{{json .NetworkSettings.Ports}}",
        (await cluster.engine.get(sid)).containers[0].container_id,
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await inspect.communicate()
    published = {k for k, v in json.loads(out).items() if v}
    assert f"{APP_PORT}/tcp" not in published, published
