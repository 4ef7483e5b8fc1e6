"""The fast path of ``jupyter cluster ls``, ``show``, ``agents`` and ``logs``: answer from
the store (and the agent's socket) when Docker agrees with the store, without loading
the engine.

Every command is a fresh Python, and the engine's start-up (importing the manager and
its Docker client, aiodocker over aiohttp, then reconciling the store with every
agent) costs a second where ``docker ps`` takes a hundredth. These commands only
read, so :func:`answer` (called by :func:`~jupyter_cluster.cli.main.main` before
anything else is imported) does what the engine's start-up would, read-only:

1. reads the ``jupyter_cluster_config`` files and the ``c.ClusterManager`` settings
   (the same traits, from :mod:`jupyter_cluster.engine.settings`);
2. forgets ended sessions past the history limits, as the engine's start does (the
   same store call); if any went, the engine's start runs to prune their saved logs;
3. lists, on each agent, the containers and networks labelled with this store's
   manager id in one request each (:mod:`~jupyter_cluster.engine.agents.docker.light`,
   the standard library over the engine's Unix socket);
4. checks that reconciliation and the lifetime sweep would change nothing: every
   container and network belongs to a live session; every container of a RUNNING
   session runs and is recorded running; every launch in progress has a live
   driver; no session is TERMINATING, RUNNING_DEGRADED (it may be restored) or near
   its time limit; every agent answered;
5. prints what the engine would print: the same store queries and formatting
   (``agents``: :mod:`.quick_agents`; ``logs``: :mod:`.quick_logs`, which reads the
   log from the agent's socket).

Anything else falls back (:func:`answer` returns None) to the engine's full start,
which reconciles and then answers: team mode (``service_url``), a reserved work uid
(``ContainerHardening.reserved_work_uid``, which the engine checks), agents over TLS or
SSH, an agent that does not answer, a configuration value the engine would refuse,
GPU detection that needs a probe (``agents``), a log the engine must read (``logs``:
see :mod:`.quick_logs`), and any discrepancy. So a session whose container died
still shows degraded (or ended) as before, and the fast path changes nothing in the
store but the history pruning the engine would do anyway. With
``JUPYTER_CLUSTER_QUICK_DEBUG`` set (read at each command), a fall-back says why on
stderr. ``tests/unit/test_cli_startup.py`` checks what it
imports, ``tests/unit/test_cli_quick.py`` when it falls back, and
``tests/integration/test_cli_quick.py`` both paths against Docker.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

from ..core import naming
from ..core.models import Session
from ..core.state import LIVE, SETTLING, ContainerStatus, SessionStatus
from ..core.time_limits import effective_lifetime, lifetime_due
from . import format as cli_format
from .quick_fallback import Fallback

#: The commands this path can answer.
COMMANDS = frozenset({"ls", "show", "agents", "logs"})


def answer(args: argparse.Namespace) -> int | None:
    """Carry out ``ls``/``show``/``agents`` without the engine when Docker agrees with
    the store; the exit code, or None when the engine must answer (see the module
    docstring). Errors of the command itself (``show`` of an unknown session) raise
    as the engine's would."""
    if args.command not in COMMANDS:
        return None
    try:
        settings = _settings()
        from ..engine.store.sessions import Store

        store = Store(settings.db_path)
        agents: list[tuple[Any, Any]] = []
        try:
            agents = _agents(settings)
            _check(store, settings, agents)
            return _print(args, store, settings, agents)
        finally:
            store.close()
            for _, docker in agents:
                docker.close()
    except Fallback as exc:
        if os.environ.get("JUPYTER_CLUSTER_QUICK_DEBUG"):
            print(f"jupyter cluster: full path: {exc}", file=sys.stderr)
        return None


def _settings() -> Any:
    """``c.ClusterManager``'s settings as the engine would read them."""
    from traitlets import TraitError

    from ..engine.settings import EngineSettings

    config = _file_config()
    section = config.get("ClusterManager", {})
    if section.get("service_url") or os.environ.get("JUPYTER_CLUSTER_SERVICE_URL"):
        raise Fallback("team mode")
    if config.get("ContainerHardening", {}).get("reserved_work_uid"):
        # The engine refuses to start when a host account holds work's uid.
        raise Fallback("ContainerHardening.reserved_work_uid: the engine checks work's uid")

    # The engine's traits under the engine's name, so c.ClusterManager.* applies.
    class ClusterManager(EngineSettings):
        pass

    try:  # warned about as a Jupyter application warns (an unknown option, say)
        settings = ClusterManager(config=config, log=_log())
    except TraitError as exc:  # a bad value: the engine reports it
        raise Fallback(f"config: {exc}") from None
    return settings


def _log() -> logging.Logger:
    """A logger that writes warnings to stderr as the engine's Jupyter application does."""
    log = logging.getLogger("ClusterConfigApp")
    if not log.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("[%(name)s] %(levelname)s | %(message)s"))
        log.addHandler(handler)
        log.propagate = False
    return log


def _file_config() -> Any:
    """What :func:`jupyter_cluster.config.file_config` reads (``jupyter_config`` then
    ``jupyter_cluster_config`` files, .py and .json, along the Jupyter config path),
    read with traitlets' own loader but without building a Jupyter application (that
    imports asyncio and more); a file that fails to load falls back to the engine,
    which reports it."""
    from jupyter_core.paths import jupyter_config_dir, jupyter_config_path
    from traitlets.config import Application, Config

    paths = jupyter_config_path()
    if jupyter_config_dir() not in paths:
        paths.insert(0, jupyter_config_dir())
    config = Config()
    try:
        for name in ("jupyter_config", "jupyter_cluster_config"):
            for found, _ in Application._load_config_files(
                name, path=paths, raise_config_file_errors=True
            ):
                config.merge(found)
    except Exception as exc:  # any failure is the engine's to report
        raise Fallback(f"config files: {exc}") from None
    return config


def _agents(settings: Any) -> list[tuple[Any, Any]]:
    """(config, reader) of every agent; Fallback unless all are on Unix sockets."""
    from ..engine.agents.docker.light import LightDocker, socket_path
    from ..engine.agents.registry import agent_configs

    timeouts = {
        "timeout": settings.docker_timeout,
        "connect_timeout": settings.docker_connect_timeout,
    }
    found = []
    for config in agent_configs(settings.agents, settings.data_root, timeouts):
        path = socket_path(config.url)
        if path is None:
            raise Fallback(f"agent {config.id} is not on a Unix socket")
        found.append((config, LightDocker(path, config.connect_timeout + 5.0)))
    return found


def _scan(manager_id: str, agents: Sequence[tuple[Any, Any]]) -> tuple[list[Any], set[str]]:
    """Every agent's containers and the sessions of its networks (Fallback when one
    does not answer)."""
    from ..engine.agents.docker.light import LightDockerError

    labels = {naming.LABEL_MANAGER: manager_id}
    containers: list[Any] = []
    networks: set[str] = set()
    for config, docker in agents:
        try:
            containers += [(config.id, c) for c in docker.containers(labels)]
            nets = docker.networks(labels)
        except LightDockerError as exc:
            raise Fallback(f"agent {config.id}: {exc}") from None
        for net in nets:
            net_labels = net.get("Labels") or {}
            if naming.LABEL_WARM not in net_labels:
                networks.add(net_labels.get(naming.LABEL_SESSION, ""))
    return containers, networks


def _check(store: Any, settings: Any, agents: Sequence[tuple[Any, Any]]) -> None:
    """Fallback unless the engine's start would change nothing (see the module docstring)."""
    pruned = store.prune_history(settings.history_max_age_days * 86400, settings.history_max_count)
    if pruned:
        raise Fallback(f"{pruned} ended session(s) forgotten: their saved logs go too")
    containers, network_sessions = _scan(store.manager_id, agents)
    sessions = store.list()
    live = {s.id: s for s in sessions if s.status in LIVE}
    recorded = {c.container_id: s.id for s in sessions for c in s.containers if c.container_id}
    found: dict[str, dict[str, Any]] = {}
    for _, state in containers:
        labels = state.get("Labels") or {}
        owner = recorded.get(state.get("Id", "")) or labels.get(naming.LABEL_SESSION, "")
        if not owner and naming.LABEL_WARM in labels:
            continue  # the warm pool's
        if owner not in live:
            raise Fallback(f"container {state.get('Id', '')[:12]} has no live session")
        found.setdefault(owner, {})[labels.get(naming.LABEL_HOST, "")] = state
    for owner in network_sessions:
        if owner not in live:
            raise Fallback(f"the network of {owner or 'no session'} has no live session")
    now = time.time()
    for session in sessions:
        _check_session(session, found.get(session.id, {}), store)
        limit = effective_lifetime(session.spec.max_lifetime, settings.max_session_lifetime)
        watched = session.status in (SessionStatus.RUNNING, SessionStatus.RUNNING_DEGRADED)
        if (watched or session.status is SessionStatus.PENDING) and lifetime_due(
            session.created_at, limit, now
        ):
            raise Fallback(f"session {session.name} is near or past its time limit")


def _check_session(session: Session, states: dict[str, Any], store: Any) -> None:
    """Fallback unless reconciliation would leave ``session`` as it is."""
    from ..engine.store.drivers import driver_alive

    status = session.status
    if status in SETTLING:
        if not driver_alive(store.driver(session.id)):
            raise Fallback(f"the launch of {session.name} has no live driver")
    elif status is SessionStatus.RUNNING:
        for container in session.containers:
            state = states.get(container.host)
            if state is None or state.get("State") != "running":
                raise Fallback(f"{session.name}'s {container.host} is not running")
            if container.status is not ContainerStatus.RUNNING:
                raise Fallback(f"{session.name}'s {container.host} is recorded {container.status}")
    elif status is not SessionStatus.ERROR:  # TERMINATING, RUNNING_DEGRADED
        raise Fallback(f"session {session.name} is {status.value}")


def _print(args: argparse.Namespace, store: Any, settings: Any, agents: Any) -> int:
    """What the engine's ``ls``/``show``/``agents``/``logs`` print."""
    if args.command == "ls":
        sessions = store.list(include_ended=args.all)
        _emit(args, [s.to_dict() for s in sessions], cli_format.sessions_table(sessions))
    elif args.command == "show":
        session = store.resolve(args.session, None)
        _emit(args, session.to_dict(), cli_format.session_details(session))
    elif args.command == "logs":
        from .quick_logs import print_log

        return print_log(args, store, agents)
    else:
        from .quick_agents import agent_rows

        rows = agent_rows(agents, store.usage(), settings)
        _emit(args, rows, cli_format.agents_table(rows))
    return 0


def _emit(args: argparse.Namespace, data: Any, text: str) -> None:
    print(json.dumps(data, indent=2) if getattr(args, "json", False) else text)
