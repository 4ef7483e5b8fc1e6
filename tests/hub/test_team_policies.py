"""Resource policies in team mode: the shared service behind the real Hub, Hub groups
deciding which policy applies, users' CLIs and servers passing requests on.

The service's configuration (:mod:`.launch`) gives the Hub group
:data:`~.launch.POLICY_GROUP` a policy stricter than the default (2 sessions, 2
containers of at most half a CPU and 512m each). The ``policy_team`` fixture makes that
group on the Hub and puts alice in it for this module only; then

- alice, as her Unix user through her CLI and through her own server, sees the
  group's policy, is refused a launch over its per-session maxima (the limit named),
  runs one within them, and meets its cap of 2 sessions through REST and through
  ``/api/kernels`` on her server (a kernel's session counts, and is refused at the cap);
- bob, no admin, can neither read nor change alice's entry: 403 on the service and
  through his server, and his CLI says why (not that his token was refused);
- the Hub admin ``clusteradmin`` changes alice's entry at run time with the CLI,
  her next launch over it is refused, the change is in the audit log, and
  ``limits rm`` gives her the group's policy back.

Every session made here is ended, the group removed, and alice's policy back to the
default before the module ends (other hub tests launch as alice).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.constants import API, SMALL_BODY, SMALL_FLAGS
from tests.support.waiting import wait_for

from .launch import MAX_SESSIONS, POLICY_GROUP, POLICY_LIMITS
from .support import ADMIN, Hub, active_sessions, end_sessions, launch, ok, wait_running

pytestmark = pytest.mark.docker

CLI = "jupyter-cluster"
KERNEL = {"name": "jupyter-cluster-session"}


def own_limits(hub: Hub, token: str) -> dict[str, Any]:
    """alice's ``GET limits`` on the service itself."""
    return dict(ok(hub.service_call("GET", f"{API}/limits", token)).json())


def wait_source(hub: Hub, token: str, source: str) -> None:
    """Wait until the service resolves alice's policy from ``source`` (it reads her
    Hub groups anew every few seconds), both for her API token and for her server's:
    her server passes requests on with its own token, whose Hub model the service
    caches on its own."""
    seen: dict[str, Any] = {}

    def there() -> bool:
        seen.update(own_limits(hub, token))
        if seen["source"] != source:
            return False
        seen.update(ok(hub.server_call("alice", "GET", f"{API}/limits", token)).json())
        return bool(seen["source"] == source)

    wait_for(there, 60, f"alice's limits to come from {source}", seen=lambda: seen)


@pytest.fixture(scope="module")
def policy_team(hub: Hub, team: dict[str, str]) -> Iterator[dict[str, str]]:
    """alice in the Hub group :data:`POLICY_GROUP` while this module runs; at the
    end her sessions ended, any run-time entry of hers dropped, the group removed."""
    alice = team["alice"]
    ok(hub.api("POST", f"groups/{POLICY_GROUP}"), 201)
    try:
        ok(hub.api("POST", f"groups/{POLICY_GROUP}/users", json={"users": ["alice"]}))
        wait_source(hub, alice, f"groups {POLICY_GROUP}")
        yield team
    finally:
        try:
            kernels = ok(hub.server_call("alice", "GET", "api/kernels", alice)).json()
            for kernel in kernels:
                hub.server_call("alice", "DELETE", f"api/kernels/{kernel['id']}", alice)
            end_sessions(hub, "alice", alice)
        finally:  # other hub tests launch as alice: her default policy back in any case
            hub.service_call("DELETE", f"{API}/limits/users/alice", team[ADMIN])
            ok(hub.api("DELETE", f"groups/{POLICY_GROUP}"))
            wait_source(hub, alice, "default")


def cli(hub: Hub, user: str, *argv: str) -> Any:
    """Run ``jupyter-cluster ARGV`` as the Unix user ``user`` (its token, its home)."""
    return hub.run_as(user, [CLI, *argv])


def test_alice_is_held_to_her_groups_policy_through_her_cli_and_her_server(
    hub: Hub, policy_team: dict[str, str]
) -> None:
    alice = policy_team["alice"]
    group = f"groups {POLICY_GROUP}"
    # what she sees: the group's policy, through her CLI and through her own server
    done = cli(hub, "alice", "limits")
    assert done.returncode == 0, done.stderr
    assert f"limits of alice (from: {group})" in done.stdout, done.stdout
    mine = json.loads(cli(hub, "alice", "limits", "--json").stdout)
    assert (mine["user"], mine["source"], mine["groups"]) == ("alice", group, [POLICY_GROUP])
    limits = mine["limits"]
    assert (limits["sessions"], limits["max_size"], limits["max_cpu"]) == (2, 2, 0.5)
    assert limits["max_mem"] == POLICY_LIMITS["max_mem"]
    # the fixture waited until her server, too, sees the group
    via_server = ok(hub.server_call("alice", "GET", f"{API}/limits", alice)).json()
    assert via_server["source"] == group, via_server
    assert via_server["limits"] == limits
    assert via_server["held"]["sessions"] == 0

    # over a per-session maximum: refused, naming the limit, nothing stored
    body = {**SMALL_BODY, "size": 3}
    too_big = hub.server_call("alice", "POST", f"{API}/sessions", alice, json=body)
    assert too_big.status_code == 400, too_big.text
    assert too_big.json()["message"] == "size: must be 1 to 2, got 3"
    done = cli(hub, "alice", "launch", "--cpu", "1", "--mem", "256m")
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "cpu: at most 0.5 CPUs per container, got 1" in done.stderr, done.stderr
    assert active_sessions(hub, "alice", alice) == []

    # within it: runs (REST through her server, and her CLI)
    first = launch(hub, "alice", alice, {**SMALL_BODY, "size": 2})
    done = cli(hub, "alice", "launch", *SMALL_FLAGS, "--json")
    assert done.returncode == 0, done.stderr
    second = json.loads(done.stdout)
    assert second["status"] == "RUNNING" and second["owner"] == "alice"
    wait_running(hub, "alice", alice, first["id"])

    # at the cap of 2: a third is refused through REST, the CLI and /api/kernels
    third = hub.server_call("alice", "POST", f"{API}/sessions", alice, json=SMALL_BODY)
    assert third.status_code == 409, third.text
    assert "the limit is 2" in third.json()["message"], third.text
    done = cli(hub, "alice", "launch", *SMALL_FLAGS)
    assert done.returncode == 2 and "the limit is 2" in done.stderr, done.stderr
    kernel = hub.server_call("alice", "POST", "api/kernels", alice, json=KERNEL, timeout=240)
    assert kernel.status_code == 409, kernel.text  # the service's reason, passed on
    assert "the limit is 2" in kernel.json()["message"], kernel.text
    assert ok(hub.server_call("alice", "GET", "api/kernels", alice)).json() == []
    ids = {s["id"] for s in active_sessions(hub, "alice", alice)}
    assert ids == {first["id"], second["id"]}

    # room for one: a kernel's session takes it, and counts against the cap; it has the
    # service's launch defaults (0.25 CPU, 256m: within her policy, unlike a cluster
    # kernel's own defaults of 1 CPU and 1g)
    done = cli(hub, "alice", "rm", second["id"])
    assert done.returncode == 0, done.stderr
    kernel = hub.server_call("alice", "POST", "api/kernels", alice, json=KERNEL, timeout=240)
    started = ok(kernel).json()
    held = own_limits(hub, alice)["held"]
    assert (held["sessions"], held["cpu"], held["mem"]) == (2, 0.75, 3 * 256 * 2**20), held
    third = hub.server_call("alice", "POST", f"{API}/sessions", alice, json=SMALL_BODY)
    assert third.status_code == 409 and "the limit is 2" in third.text, third.text
    ok(hub.server_call("alice", "DELETE", f"api/kernels/{started['id']}", alice), 204)
    assert end_sessions(hub, "alice", alice)  # the REST session (and the kernel's, if left)


def test_bob_can_neither_read_nor_change_alices_entry(
    hub: Hub, policy_team: dict[str, str]
) -> None:
    bob, admin = policy_team["bob"], policy_team[ADMIN]
    path = f"{API}/limits/users/alice"
    for method, body in (("GET", None), ("PUT", {"sessions": 9}), ("DELETE", None)):
        direct = hub.service_call(method, path, bob, json=body)
        assert direct.status_code == 403, (method, direct.text)
        assert "only admins" in direct.json()["message"], direct.text
        through = hub.server_call("bob", method, path, bob, json=body)
        assert through.status_code == 403, (method, through.text)
        assert "only admins" in through.json()["message"], through.text
    for argv in (("show", "--user", "alice"), ("set", "--user", "alice", "sessions=9")):
        done = cli(hub, "bob", "limits", *argv)
        assert done.returncode == 1, (argv, done.stdout, done.stderr)
        assert "only admins read or change other users' limits" in done.stderr, done.stderr
        assert "token" not in done.stderr, done.stderr  # his token was fine: no such hint
    entry = ok(hub.service_call("GET", path, admin)).json()
    assert entry["changed"] is None, entry  # nothing of bob's reached it
    # an admin's own server passes the same route on (as the Lab's admin view uses it);
    # an entry's "effective" is what the entry makes of the default (no groups applied)
    entry = ok(hub.server_call(ADMIN, "GET", path, admin)).json()
    assert (entry["changed"], entry["effective"]["sessions"]) == (None, MAX_SESSIONS), entry
    # a token the service refuses still says so (and which scope it needs), naming no token
    narrow = hub.token("bob", ["read:users:name!user=bob"])
    done = hub.run_as("bob", [CLI, "limits"], env={"JUPYTERHUB_API_TOKEN": narrow})
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "refused this server's token" in done.stderr, done.stderr
    assert "access:services!service=cluster" in done.stderr and narrow not in done.stderr


def test_an_admin_changes_alices_entry_at_run_time_audited(
    hub: Hub, policy_team: dict[str, str]
) -> None:
    alice = policy_team["alice"]
    since = time.time() - 1
    launch(hub, "alice", alice, SMALL_BODY)  # one of her 2
    try:
        done = cli(hub, ADMIN, "limits", "set", "--user", "alice", "sessions=1")
        assert done.returncode == 0, done.stderr
        assert 'changed at run time: {"sessions": 1}' in done.stdout, done.stdout
        mine = json.loads(cli(hub, "alice", "limits", "--json").stdout)
        assert (mine["source"], mine["limits"]["sessions"]) == ("user alice", 1), mine
        refused = hub.server_call("alice", "POST", f"{API}/sessions", alice, json=SMALL_BODY)
        assert refused.status_code == 409, refused.text
        assert "the limit is 1" in refused.json()["message"], refused.text

        done = cli(hub, ADMIN, "limits", "rm", "--user", "alice")
        assert done.returncode == 0, done.stderr
        assert own_limits(hub, alice)["source"] == f"groups {POLICY_GROUP}"
        again = launch(hub, "alice", alice, SMALL_BODY)  # the group's 2 again
        assert again["owner"] == "alice"

        done = cli(hub, ADMIN, "audit", "--user", ADMIN, "--json")
        assert done.returncode == 0, done.stderr
        records = [r for r in json.loads(done.stdout) if r["time"] >= since]
        changes = [(r["action"], r["target_owner"], r["details"]) for r in records]
        set_alice = {"kind": "users", "name": "alice", "limits": {"sessions": 1}}
        assert ("policy_set", "alice", set_alice) in changes, records
        assert ("policy_remove", "alice", {"kind": "users", "name": "alice"}) in changes, records
        # and only admins read it
        done = cli(hub, "alice", "audit")
        assert done.returncode == 1 and "only admins" in done.stderr, done.stderr
    finally:
        end_sessions(hub, "alice", alice)
