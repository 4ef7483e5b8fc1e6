"""The CLI's launch profiles: ``profile ls|save|rm`` and ``launch --profile NAME``.

``profile save NAME [launch flags]`` keeps the flags given as one of the user's own
profiles (the engine's store, or the shared service's in team mode); ``launch
--profile NAME [flags]`` launches the profile's fields with the flags given on top,
checked as the REST API checks a launch (the site's ``c.ClusterApp`` limits and
``launch_profiles`` from the config files). Called by :mod:`.commands`.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from ..config import file_config, launch_settings, local_owner
from ..core.launch_env import parse_env
from ..core.profiles import check_values, make_profile
from ..engine.api import Engine
from ..errors import InvalidRequest
from . import format as cli_format

#: CLI flag destinations of the launch flags and their REST launch field.
_FIELDS = {
    "image": "image",
    "size": "size",
    "mode": "mode",
    "cpu": "cpu",
    "mem": "mem",
    "shm": "shm",
    "gpu": "gpu",
    "mount": "mounts",
    "resource_group": "resource_group",
    "name": "name",
    "bootstrap": "bootstrap",
    "env": "env",
    "app": "apps",
    "job_command": "command",
    "max_lifetime": "max_lifetime",
    "retries": "retries",
}


def given_fields(argv: Sequence[str]) -> dict[str, Any]:
    """The launch flags given in ``argv`` (not their defaults) as REST launch fields."""
    from .launch_flags import add_launch_arguments

    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    add_launch_arguments(parser)
    parser.add_argument("--command", dest="job_command")
    parser.add_argument("--retries")
    parser.add_argument("--max-lifetime")
    for action in parser._actions:
        action.default = argparse.SUPPRESS
    known, _ = parser.parse_known_args(list(argv))
    return {_FIELDS[k]: _rest_value(k, v) for k, v in vars(known).items() if k in _FIELDS}


def _rest_value(dest: str, value: Any) -> Any:
    field = _FIELDS[dest]
    if field in ("size", "gpu", "retries"):
        try:
            return int(value)
        except ValueError:
            raise InvalidRequest(
                f"{field}: expected a whole number, got {value!r}", field
            ) from None
    if field == "env":  # KEY=VALUE each; which names a site reserves is the launch's check
        return dict(parse_env(value, [item.partition("=")[0] for item in value]))
    if field == "apps":
        pairs = dict(item.partition("=")[::2] for item in value)
        try:
            return {name: int(port) for name, port in pairs.items()}
        except ValueError:
            raise InvalidRequest("apps: give NAME=PORT with a port number", "apps") from None
    return value


def launch_body(args: argparse.Namespace) -> dict[str, Any]:
    """The REST launch body of ``launch --profile NAME [flags]``."""
    return {"profile": args.profile, **given_fields(args.given)}


def admit(engine: Engine[Any], args: argparse.Namespace) -> Any:
    """The spec of ``launch --profile``: the profile merged and checked as REST does."""
    gate = engine.launch_gate(launch_settings(file_config()))
    return gate.admit(launch_body(args), local_owner()).spec


async def profile(engine: Engine[Any], args: argparse.Namespace) -> int:
    """``profile ls|save|rm``."""
    owner = local_owner()
    if args.profile_command == "save":
        fields = given_fields(args.given)
        saved = check_values(
            make_profile(args.profile_name, {"description": args.description, "fields": fields})
        )
        await engine.save_profile(saved, owner)
        print(f"saved launch profile {saved.name}")
    elif args.profile_command == "rm":
        await engine.remove_profile(args.profile_name, owner)
        print(f"removed launch profile {args.profile_name}")
    else:
        site = launch_settings(file_config()).profiles()
        rows = [{**p.to_dict(), "scope": "site"} for p in site.values()]
        rows += [{**p.to_dict(), "scope": "user"} for p in await engine.list_profiles(owner)]
        if args.json:
            print(json.dumps(rows, indent=2))
        else:
            table = [(r["name"], r["scope"], _shape(r["fields"]), r["description"]) for r in rows]
            print(cli_format.table(("NAME", "SCOPE", "FIELDS", "DESCRIPTION"), table))
    return 0


def _shape(fields: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in fields.items())
