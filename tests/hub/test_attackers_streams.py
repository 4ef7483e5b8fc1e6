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
import statistics
import subprocess
import time
import uuid
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tests.support.constants import API, SMALL_BODY

from .support import Hub, end_sessions, launch, ok, wait_running
from .test_attackers_kernels import _as, _result

STREAMS = 110
#: ClusterApp.max_streams_per_user's default.
PER_USER = 12
#: bob's launches and ``GET sessions`` of each kind (without and with her streams).
LAUNCHES, GETS = 5, 30
#: Seconds a listing may take beyond 1.2 times its idle median.
GET_SLACK = 0.005


def _timed_launch(hub: Hub, token: str) -> float:
    """Seconds from bob's POST until his size-2 session runs."""
    started = time.monotonic()
    session = launch(hub, "bob", token, {**SMALL_BODY, "size": 2})
    wait_running(hub, "bob", token, session["id"], interval=0.02)  # not 0.5 s steps
    return time.monotonic() - started


def _launches(hub: Hub, token: str) -> float:
    """The median of :data:`LAUNCHES` timed launches of bob's, each ended after."""
    times = []
    for _ in range(LAUNCHES):
        times.append(_timed_launch(hub, token))
        end_sessions(hub, "bob", token)
    print("bob's launches (s):", " ".join(f"{t:.2f}" for t in times))
    return statistics.median(times)


def _listing(hub: Hub, token: str) -> float:
    """The median seconds of :data:`GETS` ``GET sessions`` of bob's through his server."""
    times = []
    for _ in range(GETS):
        started = time.monotonic()
        ok(hub.server_call("bob", "GET", f"{API}/sessions", token))
        times.append(time.monotonic() - started)
    return statistics.median(times)


@pytest.mark.serial  # compares bob's launch times with and without her streams
def test_one_users_streams_do_not_stop_anothers_launches(hub: Hub, team: dict[str, str]) -> None:
    alice, bob = team["alice"], team["bob"]
    stop = Path(f"/tmp/jc-probe-stop-{uuid.uuid4().hex}")
    flood = None
    try:
        hers = launch(hub, "alice", alice, SMALL_BODY)
        wait_running(hub, "alice", alice, hers["id"])
        alone, listed_alone = _launches(hub, bob), _listing(hub, bob)

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

        flooded, listed_flooded = _launches(hub, bob), _listing(hub, bob)
        assert flood.poll() is None  # she still holds her streams
        print(
            f"bob's launch {alone:.2f} s alone, {flooded:.2f} s flooded "
            f"({flooded / alone:.2f}x); GET sessions {listed_alone * 1000:.1f} ms alone, "
            f"{listed_flooded * 1000:.1f} ms flooded ({listed_flooded / listed_alone:.2f}x)"
        )
        assert flooded <= 1.2 * alone, (alone, flooded)
        assert listed_flooded <= 1.2 * listed_alone + GET_SLACK, (listed_alone, listed_flooded)
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
