"""One user's streams against everyone's launches (security review X8), as Unix alice.

alice, a real Unix user of the team's host (``setpriv``), opens 110 followed-log
streams of her own session straight on the service's socket with her own token
(:mod:`tests.hub.probes` ``flood``), and holds them. The service gives her at most
its per-user stream cap and answers the rest 429; meanwhile bob launches through
his server and his session runs, in about the time it takes without her streams
(rounds with and without them alternate, so the machine's drift weighs on both).
Before the caps and the users' own Docker pool, 110 streams made every launch
fail after the Docker connect timeout.
"""

from __future__ import annotations

import contextlib
import json
import pwd
import statistics
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tests.support.constants import API, SMALL_BODY

from .support import Hub, end_sessions, launch, ok, wait_running
from .test_attackers_kernels import _as, _result

STREAMS = 110
#: ClusterApp.max_streams_per_user's default.
PER_USER = 12
#: Rounds (bob launches and lists his sessions without her streams, then with them),
#: and his ``GET sessions`` of each kind in a round.
LAUNCHES, GETS = 5, 10
#: Seconds a listing may take beyond 1.2 times its idle median.
GET_SLACK = 0.005


def _timed_launch(hub: Hub, token: str) -> float:
    """Seconds from bob's POST until his size-2 session runs."""
    started = time.monotonic()
    session = launch(hub, "bob", token, {**SMALL_BODY, "size": 2})
    wait_running(hub, "bob", token, session["id"], interval=0.02)  # not 0.5 s steps
    return time.monotonic() - started


def _listing(hub: Hub, token: str) -> list[float]:
    """Seconds of each of :data:`GETS` ``GET sessions`` of bob's through his server."""
    times = []
    for _ in range(GETS):
        started = time.monotonic()
        ok(hub.server_call("bob", "GET", f"{API}/sessions", token))
        times.append(time.monotonic() - started)
    return times


@contextlib.contextmanager
def _her_streams(hub: Hub, session_id: str) -> Iterator[None]:
    """alice opens :data:`STREAMS` followed-log streams of her session on the service's
    socket (her token, as in a terminal of her server), holds the ones she is given
    while the block runs, then closes them."""
    stop = Path(f"/tmp/jc-probe-stop-{uuid.uuid4().hex}")
    path = f"{urlparse(hub.service_url).path}{API}/sessions/{session_id}"
    path += "/containers/main1/logs?follow=1"
    argv = ("flood", str(hub.service_socket), path, str(STREAMS), str(stop))
    flood = subprocess.Popen(
        _as(pwd.getpwnam("alice"), *argv),
        env=hub.user_env("alice"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd="/",
    )
    try:
        assert flood.stdout is not None
        opened = json.loads(flood.stdout.readline())["opened"]
        assert opened == {"200": PER_USER, "429": STREAMS - PER_USER}, opened
        yield
        assert flood.poll() is None  # she still holds her streams
        stop.touch()
        assert _result(flood)["held"] == PER_USER
    finally:
        if flood.poll() is None:  # never left holding streams
            flood.kill()
            flood.wait()
        stop.unlink(missing_ok=True)


@pytest.mark.serial  # compares bob's launch times with and without her streams
def test_one_users_streams_do_not_stop_anothers_launches(hub: Hub, team: dict[str, str]) -> None:
    alice, bob = team["alice"], team["bob"]
    alone: list[float] = []
    flooded: list[float] = []
    listed_alone: list[float] = []
    listed_flooded: list[float] = []
    try:
        hers = launch(hub, "alice", alice, SMALL_BODY)
        wait_running(hub, "alice", alice, hers["id"])
        # Rounds alternate, so a machine that slows down or speeds up over the
        # minute (other work ending, Docker's clean-up) weighs on both kinds alike.
        for _ in range(LAUNCHES):
            alone.append(_timed_launch(hub, bob))
            end_sessions(hub, "bob", bob)
            listed_alone += _listing(hub, bob)
            with _her_streams(hub, hers["id"]):
                flooded.append(_timed_launch(hub, bob))
                end_sessions(hub, "bob", bob)
                listed_flooded += _listing(hub, bob)
        launch_alone, launch_flooded = statistics.median(alone), statistics.median(flooded)
        get_alone, get_flooded = statistics.median(listed_alone), statistics.median(listed_flooded)
        print("bob's launches alone (s):", " ".join(f"{t:.2f}" for t in alone))
        print("bob's launches flooded (s):", " ".join(f"{t:.2f}" for t in flooded))
        print(
            f"bob's launch {launch_alone:.2f} s alone, {launch_flooded:.2f} s flooded "
            f"({launch_flooded / launch_alone:.2f}x); GET sessions {get_alone * 1000:.1f} ms "
            f"alone, {get_flooded * 1000:.1f} ms flooded ({get_flooded / get_alone:.2f}x)"
        )
        assert launch_flooded <= 1.2 * launch_alone, (alone, flooded)
        assert get_flooded <= 1.2 * get_alone + GET_SLACK, (get_alone, get_flooded)
    finally:
        end_sessions(hub, "bob", bob)
        end_sessions(hub, "alice", alice)
