"""The CLI starts without importing what its command does not use (issue 27, item 6).

Every ``jupyter cluster`` command is a fresh Python, so each library imported at
start-up costs every command its import time: the SSH library, the HTTP client of
team mode, the Docker client, the Jupyter server and kernel client. Each case runs a
fresh interpreter that imports the CLI's entry point, parses a command line the
way :func:`~jupyter_cluster.cli.main.main` does, and lists what got imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
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
