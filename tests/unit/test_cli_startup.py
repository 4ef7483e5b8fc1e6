"""The CLI starts without importing what its command does not use (issue 27, item 6).

Every ``jupyter cluster`` command is a fresh Python, so each library imported at
start-up costs every command its import time: the SSH library, the HTTP client of
team mode, the Docker client, the Jupyter server and kernel client. Each case runs a
fresh interpreter that imports the CLI's entry point, parses a command line the
way :func:`~jupyter_cluster.cli.main.main` does, and lists what got imported.

``ls``, ``show`` and ``agents`` answer from the store when Docker agrees with it
(``jupyter_cluster/cli/quick.py``): run whole against a fake Docker engine on a Unix
socket with nothing to reconcile, they load neither the Docker client nor anything
of team mode or kernels.
"""

from __future__ import annotations

import json
import os
import shutil
import socketserver
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

#: Never needed to parse a command line or print help.
HEAVY = (
    "asyncssh",
    "httpx",
    "aiodocker",
    "aiohttp",
    "tornado",
    "jupyter_server",
    "jupyter_client",
    "zmq",
    "traitlets",
    "jupyter_core",
    "sqlite3",
    "asyncio",
)
#: Not needed by ``ls``/``show``/``agents`` on this machine's engine: the shared
#: service's client (HTTP, SSH), the Jupyter server and kernels, the launch's keys.
NOT_FOR_LISTING = ("asyncssh", "httpx", "tornado", "jupyter_server", "jupyter_client", "zmq")

PARSE = """
import json, sys
from jupyter_cluster.cli.main import build_parser
try:
    build_parser().parse_args({argv!r})
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)))
"""

ENGINE = """
import json, sys
from jupyter_cluster.cli.main import build_parser
build_parser().parse_args({argv!r})
from jupyter_cluster.cli import commands, format
from jupyter_cluster.config import make_engine
make_engine()
print(json.dumps(sorted(sys.modules)))
"""


def imported(script: str, env: dict[str, str] | None = None) -> set[str]:
    """The top-level packages a fresh interpreter has imported after ``script``."""
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env=env,
    ).stdout
    return {name.split(".")[0] for name in json.loads(out.splitlines()[-1])}


@pytest.mark.parametrize(
    "argv", [["--help"], ["ls"], ["ls", "--help"], ["show", "x"], ["agents"], ["logs", "s", "h"]]
)
def test_parsing_a_command_line_imports_nothing_heavy(argv: list[str]) -> None:
    found = imported(PARSE.format(argv=argv))
    assert "jupyter_cluster" in found
    assert not found & set(HEAVY), sorted(found & set(HEAVY))


@pytest.mark.parametrize("argv", [["ls"], ["show", "x"], ["agents"]])
def test_the_listing_commands_build_their_engine_without_team_mode_or_kernels(
    argv: list[str], tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")}
    env |= {"JUPYTER_CONFIG_DIR": str(tmp_path), "JUPYTER_DATA_DIR": str(tmp_path)}
    found = imported(ENGINE.format(argv=argv), env)
    assert "traitlets" in found  # the engine was built: its configuration is traitlets
    assert not found & set(NOT_FOR_LISTING), sorted(found & set(NOT_FOR_LISTING))


# -- the listing commands' fast path (cli/quick.py) ------------------------------------

#: Not imported by ``ls``/``show``/``agents`` when the store and Docker agree.
NOT_ON_THE_FAST_PATH = (
    "aiohttp",
    "aiodocker",
    "asyncssh",
    "httpx",
    "jupyter_client",
    "zmq",
    "asyncio",
)

RUN = """
import json, sys
from jupyter_cluster.cli.main import main
try:
    main({argv!r})
except SystemExit as exc:
    print("exit", exc.code)
print(json.dumps(sorted(sys.modules)))
"""


class FakeDocker(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """A Docker engine on a Unix socket that answers the fast path's GETs: no
    containers, no networks, and a ``docker info`` of 4 CPUs and 8 GiB."""

    daemon_threads = True
    paths: list[str]

    class Handler(socketserver.StreamRequestHandler):
        def handle(self) -> None:
            line = self.rfile.readline().decode()
            while self.rfile.readline() not in (b"\r\n", b""):
                pass
            path = line.split()[1]
            self.server.paths.append(path)  # type: ignore[attr-defined]
            if path.startswith(("/containers/json?", "/networks?")):
                body: object = []
            elif path == "/info":
                body = {"ID": "fake", "NCPU": 4, "MemTotal": 8 << 30, "Runtimes": {"runc": {}}}
            else:
                self.wfile.write(b"HTTP/1.0 404 Not Found\r\n\r\n{}")
                return
            data = json.dumps(body).encode()
            self.wfile.write(b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" + data)


@pytest.fixture
def fake_docker(tmp_path: Path) -> Iterator[tuple[FakeDocker, dict[str, str]]]:
    """A :class:`FakeDocker` and the environment of a workspace whose one agent it is."""
    short = tempfile.mkdtemp(prefix="jc-")  # a socket's path must stay short
    server = FakeDocker(os.path.join(short, "docker.sock"), FakeDocker.Handler)
    server.paths = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    (tmp_path / "jupyter_cluster_config.py").write_text(
        f"c.ClusterManager.agents = [{{'id': 'solo', 'url': 'unix://{server.server_address}'}}]\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "DOCKER"))}
    env |= {"JUPYTER_CONFIG_DIR": str(tmp_path), "JUPYTER_DATA_DIR": str(tmp_path)}
    try:
        yield server, env
    finally:
        server.shutdown()
        server.server_close()
        shutil.rmtree(short, ignore_errors=True)


def run_cli_modules(argv: list[str], env: dict[str, str]) -> tuple[str, set[str]]:
    """The output of ``jupyter cluster ARGV`` run in a fresh interpreter, and every
    module it imported."""
    out = subprocess.run(
        [sys.executable, "-c", RUN.format(argv=argv)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env=env,
    ).stdout
    *printed, modules = out.splitlines()
    return "\n".join(printed), set(json.loads(modules))


def run_cli(argv: list[str], env: dict[str, str]) -> tuple[str, set[str]]:
    """:func:`run_cli_modules` with only the top-level packages."""
    printed, modules = run_cli_modules(argv, env)
    return printed, {name.split(".")[0] for name in modules}


@pytest.mark.parametrize(
    "argv",
    [["ls"], ["ls", "--all", "--json"], ["agents"], ["show", "nope"], ["logs", "nope", "main1"]],
)
def test_the_listing_commands_answer_without_the_engine_when_docker_agrees(
    argv: list[str], fake_docker: tuple[FakeDocker, dict[str, str]]
) -> None:
    server, env = fake_docker
    printed, found = run_cli(argv, env)
    assert not found & set(NOT_ON_THE_FAST_PATH), sorted(found & set(NOT_ON_THE_FAST_PATH))
    assert "jupyter_cluster" in found
    asked = {p.split("?")[0] for p in server.paths}
    assert {"/containers/json", "/networks"} <= asked  # the store was checked against Docker
    if argv == ["ls"]:
        assert printed == "no sessions (launch one with `jupyter cluster launch`)\nexit 0"
    elif argv[0] == "ls":
        assert printed.endswith("[]\nexit 0")
    elif argv == ["agents"]:
        [_, row, _] = printed.splitlines()
        assert row.split()[:4] == ["solo", "default", "4", "CPU"], printed
        assert "8g" in row and "available" in row, printed
    else:  # an unknown session: the engine's error and exit code
        assert printed == "exit 2"


#: What reading the store needs not: the scheduler and the queue's placing (imported
#: where a launch or a queue pass places), the Agent protocol's classes (the agents'
#: configuration and ``docker info`` are in agents/agent_config.py), and uuid (a new
#: store's id only).
NOT_FOR_READING = (
    "jupyter_cluster.engine.agents.base",
    "jupyter_cluster.core.scheduler",
    "jupyter_cluster.core.queue",
    "jupyter_cluster.core.waiting_reasons",
    "jupyter_cluster.core.warm",
    "uuid",
)


@pytest.mark.parametrize("argv", [["ls"], ["ls", "--all"], ["show", "nope"], ["agents"]])
def test_reading_the_store_loads_no_placing_code(
    argv: list[str], fake_docker: tuple[FakeDocker, dict[str, str]]
) -> None:
    _, env = fake_docker
    run_cli(["ls"], env)  # the store is made on the first run (its id needs uuid)
    _, modules = run_cli_modules(argv, env)
    assert "jupyter_cluster.engine.store.sessions" in modules  # it did read the store
    assert not modules & set(NOT_FOR_READING), sorted(modules & set(NOT_FOR_READING))
