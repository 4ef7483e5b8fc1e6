"""``jupyter cluster limits``: your resource limits; admins change a user's or group's.

``limits`` prints the caller's effective policy (where it comes from, what they
hold now); ``limits show --user U`` / ``--group G`` one entry; ``limits set --user U
KEY=VALUE…`` changes an entry at run time (the keys given join the earlier run-time
change; ``KEY=`` drops one) and ``limits rm --user U`` drops the run-time change. With a
local engine this reads and writes its store (whose owner is its admin) and records
each change in its audit log (front end ``cli``); on the shared service of a team
it uses ``cluster/api/limits…``, where only admins may change or read others'.
What the keys mean: :mod:`jupyter_cluster.core.resource_policies`. Called by
:func:`.commands.run`.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from ..config import file_config, launch_settings, local_owner
from ..core.audit import AuditEvent
from ..core.resource_policies import HELP, KEYS, LISTS, held_by
from ..core.units import format_size
from ..engine.api import Engine
from ..errors import InvalidRequest
from . import format as cli_format


def parse_pairs(pairs: list[str]) -> dict[str, Any]:
    """``KEY=VALUE`` words as policy keys: numbers as numbers, lists comma-separated,
    an empty value as None (drop that key). InvalidRequest for a wrong word."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or key not in KEYS:
            raise InvalidRequest(
                f"{pair!r}: expected KEY=VALUE with KEY one of {', '.join(KEYS)}", "limits"
            )
        value = value.strip()
        if value == "":
            out[key] = None
        elif key in LISTS:
            out[key] = [v.strip() for v in value.split(",") if v.strip()]
        else:
            out[key] = _number(value)
    return out


def _number(value: str) -> Any:
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value  # a size (16g) or a duration (2h)


def _target(args: argparse.Namespace) -> tuple[str, str]:
    if args.user:
        return "users", args.user
    if args.group:
        return "groups", args.group
    raise InvalidRequest("name a user (--user U) or a group (--group G)", "limits")


async def limits(engine: Engine[Any], args: argparse.Namespace) -> int:
    """Carry out ``limits`` [``show`` | ``set`` | ``rm``]."""
    http = getattr(engine, "http", None)
    sub = getattr(args, "limits_command", None)
    gate: Any = None
    if http is None:
        gate = engine.launch_gate(launch_settings(file_config()))
    if sub is None and not (args.user or args.group):
        if http is not None:
            data = await http.call("GET", "limits")
        else:
            resolved = gate.resource_policy(local_owner(), ())
            sessions = await engine.list()
            data = {
                "user": local_owner(),
                "groups": [],
                "source": resolved.source,
                "limits": resolved.policy.to_dict(),
                "held": held_by(sessions, local_owner()),
            }
        _print_own(args, data)
        return 0
    kind, name = _target(args)
    path = f"limits/{kind}/{name}"
    if sub in (None, "show"):
        data = await http.call("GET", path) if http else gate.limits_entry(kind, name)
    elif sub == "set":
        changes = parse_pairs(args.pairs)
        current = (await http.call("GET", path) if http else gate.limits_entry(kind, name))[
            "changed"
        ] or {}
        keys = {k: v for k, v in {**current, **changes}.items() if v is not None}
        if http:
            data = await http.call("PUT", path, keys)
        else:
            data = gate.set_limits(kind, name, keys)
            _audit(engine, "policy_set", kind, name, {"kind": kind, "name": name, "limits": keys})
    else:
        if http:
            await http.call("DELETE", path)
        else:
            gate.remove_limits(kind, name)
            _audit(engine, "policy_remove", kind, name, {"kind": kind, "name": name})
        print(f"the run-time limits of {kind[:-1]} {name} were removed")
        return 0
    _print_entry(args, data)
    return 0


def _audit(engine: Any, action: str, kind: str, name: str, details: dict[str, Any]) -> None:
    from ..engine.store.audit_log import AuditLog

    AuditLog(engine.store.tx).append(
        AuditEvent(
            at=time.time(),
            actor=local_owner(),
            front_end="cli",
            action=action,
            target_owner=name if kind == "users" else None,
            details=details,
        )
    )


def _rows(limits: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(key, _shown(limits.get(key)), HELP[key]) for key in KEYS]


def _shown(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(value) or "(all)"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _print_own(args: argparse.Namespace, data: dict[str, Any]) -> None:
    if args.json:
        print(json.dumps(data, indent=2))
        return
    held = data["held"]
    print(f"limits of {data['user']} (from: {data['source']})")
    print(
        f"held now: {held['sessions']} sessions, {held['cpu']:g} CPU, "
        f"{format_size(held['mem'])} memory, {held['gpu']} GPU"
    )
    print(cli_format.table(("LIMIT", "VALUE", "MEANING"), _rows(data["limits"])))


def _print_entry(args: argparse.Namespace, data: dict[str, Any]) -> None:
    if args.json:
        print(json.dumps(data, indent=2))
        return
    print(f"{data['kind'][:-1]} {data['name']}")
    print(f"configured: {json.dumps(data['configured'], sort_keys=True)}")
    print(f"changed at run time: {json.dumps(data['changed'], sort_keys=True)}")
    print(cli_format.table(("LIMIT", "VALUE", "MEANING"), _rows(data["effective"])))
