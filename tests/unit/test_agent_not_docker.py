"""An agent whose URL answers HTTP but is no Docker engine (a wrong port): a real
aiohttp server that answers 404 with an empty body, reached by the real Docker agent
through aiodocker. Its errors say what answered and what to check, not an empty
"failed:"."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from jupyter_cluster.engine.agents.agent_config import AgentConfig
from jupyter_cluster.engine.agents.docker.agent import DockerAgent
from jupyter_cluster.errors import AgentError


@pytest.fixture
async def not_docker() -> AsyncIterator[str]:
    """The URL of an HTTP server that answers every request 404 with no body."""

    async def nothing(request: web.Request) -> web.Response:
        return web.Response(status=404)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", nothing)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    yield f"tcp://127.0.0.1:{port}"
    await runner.cleanup()


async def test_a_url_that_is_not_dockers_api_says_so(not_docker: str) -> None:
    agent = DockerAgent(AgentConfig(id="web", url=not_docker, insecure=True))
    try:
        info = await agent.info()
        assert not info.reachable
        assert info.message == (
            "agent web: reading its info failed: HTTP 404 with no message; "
            f"is {not_docker} a Docker engine's API?"
        )
        with pytest.raises(AgentError) as refused:
            await agent.list_containers({})
        assert refused.value.message.endswith(f"is {not_docker} a Docker engine's API?")
    finally:
        await agent.close()
