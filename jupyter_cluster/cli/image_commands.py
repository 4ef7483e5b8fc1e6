"""``jupyter cluster image pull`` and ``image push-to-agents``: images onto the agents.

Called by :func:`~jupyter_cluster.cli.commands.run` with the engine of this
machine's configuration. Both work on that configuration's agents (a team's
administrator runs them where the service runs, with its configuration); the work
itself is :mod:`jupyter_cluster.engine.images`. Prints one line per agent and exits
1 when any agent failed.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..core.images import auth_for, check_allowed
from ..engine.agents.base import Agent, AgentConfig
from ..engine.agents.registry import make_agent
from ..engine.images import Outcome, pull_to_agents, push_to_agents
from ..engine.manager import ClusterManager
from ..errors import InvalidRequest

#: How this machine's own Docker engine is named in messages.
THIS_MACHINE = "this machine"


def _chosen(engine: ClusterManager, wanted: list[str] | None) -> list[Agent]:
    if not wanted:
        return list(engine.pool.agents.values())
    return [engine.pool.get(agent_id) for agent_id in dict.fromkeys(wanted)]


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


async def image_to_agents(engine: Any, args: argparse.Namespace) -> int:
    """Carry out ``image pull`` or ``image push-to-agents``; the exit code."""
    try:
        if not isinstance(engine, ClusterManager):
            raise InvalidRequest(
                f"image {args.image_command} works on the agents of this machine's "
                "configuration; this one uses a shared service: run it where the service "
                "runs, with the service's configuration"
            )
        check_allowed(args.image, engine.allowed_registries, (engine.default_image,))
        agents = _chosen(engine, args.agent)
        if args.image_command == "pull":
            auth = auth_for(args.image, engine.registry_credentials)
            outcomes = await pull_to_agents(
                agents, args.image, auth, engine.image_pull_timeout, _say
            )
        else:
            outcomes = await _push(agents, args.image)
    finally:
        await engine.close()
    for outcome in outcomes:
        print(f"{outcome.agent}: {outcome.text}")
    return 0 if all(o.done for o in outcomes) else 1


async def _push(agents: list[Agent], image: str) -> list[Outcome]:
    """Push from this machine's engine; an agent that *is* this engine is skipped."""
    source = make_agent(AgentConfig(id=THIS_MACHINE))
    try:
        here = [a for a in agents if not a.config.url]
        outcomes = await push_to_agents(source, [a for a in agents if a.config.url], image)
    finally:
        await source.close()
    skipped = [Outcome(a.id, True, "is this machine's engine (the source)") for a in here]
    return skipped + outcomes
