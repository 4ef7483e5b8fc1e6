"""One user's streams against everyone's launches (security review X8), as Unix alice.

alice, a real Unix user of the team's host (``setpriv``), opens 110 followed-log
streams of her own session straight on the service's socket with her own token
(:mod:`tests.hub.probes` ``flood``), and holds them. The service gives her at most
its per-user stream cap and answers the rest 429; meanwhile bob launches through
his server and his session runs, in about the time it takes without her streams.
Before the caps and the users' own Docker pool, 110 streams made every launch
fail after the Docker connect timeout.
"""

from __future__ import annotations

import json
import pwd
import subprocess
import time
import uuid
from pathlib import Path
from urllib.parse import urlparse

from tests.support.constants import API, SMALL_BODY

from .support import Hub, end_sessions, launch, wait_running
from .test_attackers_kernels import _as, _result

STREAMS = 110
#: ClusterApp.max_streams_per_user's default.
PER_USER = 12


def _timed_launch(hub: Hub, token: str) -> float:
    """Seconds from bob's POST until his size-2 session runs."""
    started = time.monotonic()
    session = launch(hub, "bob", token, {**SMALL_BODY, "size": 2})
    wait_running(hub, "bob", token, session["id"])
    return time.monotonic() - started


def test_one_users_streams_do_not_stop_anothers_launches(hub: Hub, team: dict[str, str]) -> None:
    alice, bob = team["alice"], team["bob"]
    stop = Path(f"/tmp/jc-probe-stop-{uuid.uuid4().hex}")
    flood = None
    try:
        hers = launch(hub, "alice", alice, SMALL_BODY)
        wait_running(hub, "alice", alice, hers["id"])
        alone = _timed_launch(hub, bob)
        end_sessions(hub, "bob", bob)

        path = f"{urlparse(hub.service_url).path}{API}/sessions/{hers['id']}"
        path += "/containers/main1/logs?follow=1"
        argv = ("flood", str(hub.service_socket), path, str(STREAMS), str(stop))
        flood = subprocess.Popen(
            _as(pwd.getpwnam("alice"), *argv),
            env=hub.user_env("alice"),  # her token, as in a terminal of her server
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd="/",
        )
        assert flood.stdout is not None
        opened = json.loads(flood.stdout.readline())["opened"]
        assert opened == {"200": PER_USER, "429": STREAMS - PER_USER}, opened

        flooded = _timed_launch(hub, bob)
        assert flood.poll() is None  # she still holds her streams
        assert flooded < max(3 * alone, alone + 20), (alone, flooded)
    finally:
        stop.touch()
        try:
            if flood is not None:
                assert _result(flood)["held"] == PER_USER
        finally:
            if flood is not None and flood.poll() is None:  # never left holding streams
                flood.kill()
                flood.wait()
            stop.unlink(missing_ok=True)
            end_sessions(hub, "bob", bob)
            end_sessions(hub, "alice", alice)
