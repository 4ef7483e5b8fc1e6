"""The README's "Web apps in main1" steps, as written there, on the real Docker engine.

``jupyter cluster launch --size 2 --app tensorboard=6006`` declares an app, ``show``
lists it (the README's comment says how), and every container carries its port in
``BACKENDAI_PREOPEN_PORTS``, where Backend.AI scripts look for the ports a user asked
to have opened. The lines run in bash after ``source .venv/bin/activate``, from the
clone's root, with ``SESSION`` replaced by the id the launch printed.
"""

from __future__ import annotations

import re

from tests.support.constants import REPO
from tests.support.readme import commands_of, ok_in_bash, readme_block

from .support import Workspace

LAUNCH = "jupyter cluster launch --size 2 --app tensorboard=6006"
SHOW = "jupyter cluster show SESSION"


def test_an_app_declared_at_launch_is_listed_and_its_port_is_preopened(ws: Workspace) -> None:
    block = readme_block("bash", LAUNCH + '   # REST: "apps": {"tensorboard": 6006}')
    assert commands_of(block) == [LAUNCH, SHOW], block
    promised = re.search(r"# (apps .*)$", block.splitlines()[1])
    assert promised is not None, block
    launched = ok_in_bash(LAUNCH, ws.env, REPO)
    found = re.search(r"^session\s+(\S+)$", launched, re.M)
    assert found is not None, launched
    session = found.group(1)
    try:
        shown = ok_in_bash(SHOW.replace("SESSION", session), ws.env, REPO)
        assert re.search(r"^apps\s+tensorboard=6006$", shown, re.M), shown
        assert promised.group(1).split() == ["apps", "tensorboard=6006"]
        for host in ("main1", "sub1"):
            env = ws.ok_cli("exec", session, host, "--", "env").stdout.splitlines()
            assert "BACKENDAI_PREOPEN_PORTS=6006" in env, (host, env)
    finally:
        ws.cli("rm", session)
    assert ws.docker_objects() == ([], [])
