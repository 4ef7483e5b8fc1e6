"""``jupyter cluster kernelspec install NAME [--profile P] [launch flags]``.

Called by :mod:`.commands`. Without ``--profile`` the launch flags (their defaults
for those not given) become the provisioner's config. With ``--profile P`` the
profile's fields, with the flags given on top, are resolved now, when the kernelspec
is written, and checked as ``launch --profile`` is (the ``ClusterApp`` limits and
``launch_profiles`` of the config files, the user's own profiles): the provisioner
launches a kernel's session from its kernelspec's fields, not through the launch
gate, so it cannot resolve a profile at each start. The kernelspec names the
profile it was made from (``metadata.cluster_profile``); install it again after
the profile changes.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..config import file_config, launch_settings, local_owner, make_engine
from ..core.models import LaunchSpec
from ..core.naming import DEFAULT_IMAGE
from ..engine.api import Engine
from ..errors import ClusterError, InvalidRequest, NotFound
from ..provisioning import kernelspec
from .launch_flags import launch_fields
from .profile_commands import given_fields

#: Launch fields a kernelspec does not keep: each kernel launches its own session.
_NOT_KEPT = ("name", "command", "retries", "max_lifetime", "apps")


async def install(args: argparse.Namespace) -> int:
    """Write the kernelspec of ``kernelspec install``; prints where."""
    engine: Engine[Any] | None = None  # one for the profile's checks and the warning
    try:
        if args.profile:
            engine = make_engine()
            spec, image_given = await profile_spec(engine, args.profile, given_fields(args.given))
        else:
            fields = launch_fields(args)
            image_given = bool(args.image)
            spec = LaunchSpec.create(image=fields.pop("image", DEFAULT_IMAGE), **fields)
        config = kernelspec.provisioner_config(spec, image_given, args.launch_timeout)
        display = args.display_name or kernelspec.display_name(spec, args.profile)
        try:
            path = kernelspec.install(
                args.kernel_name,
                display,
                config,
                user=args.user,
                sys_prefix=args.sys_prefix,
                prefix=args.prefix,
                profile=args.profile,
            )
        except OSError as exc:  # where it goes cannot be written (a prefix, no right)
            where = f" {exc.filename}" if exc.filename else ""
            raise InvalidRequest(
                f"cannot write kernelspec {args.kernel_name}:{where}: {exc.strerror or exc}; "
                "choose where with --user, --sys-prefix or --prefix",
                "prefix",
            ) from None
        print(f"installed kernelspec {args.kernel_name} in {path}")
        engine = engine or make_engine()  # made once all else was accepted
        await _warn_unless_placeable(engine, args.kernel_name, config)
    finally:
        if engine is not None:
            await engine.close()
    return 0


async def profile_spec(
    engine: Engine[Any], name: str, overrides: dict[str, Any]
) -> tuple[LaunchSpec, bool]:
    """The spec of profile ``name`` with the REST-shaped ``overrides`` on top, checked
    by ``engine``'s launch gate (the shared service's profiles in team mode), and
    whether it names an image. :class:`InvalidRequest` for an unknown profile or
    fields the limits refuse."""
    gate = engine.launch_gate(launch_settings(file_config()))
    form = await gate.options(local_owner())
    found = {p["name"]: p for p in form.get("profiles") or []}.get(name)
    fields = {**found["fields"], **overrides} if found else {}
    dropped = sorted(k for k in _NOT_KEPT if fields.pop(k, None) is not None)
    if dropped:
        print(f"not kept by a kernelspec: {', '.join(dropped)}", file=sys.stderr)
    # Unknown names, and the limits, are the gate's to refuse, in its words.
    admitted = gate.admit({"profile": name, **overrides}, local_owner()).spec
    if isinstance(admitted, LaunchSpec):  # checked here (a local engine)
        return admitted, "image" in fields
    if found is None:  # the service's gate passes launches on unchecked
        known = ", ".join(found_names(form)) or "none"
        raise InvalidRequest(
            f"profile: no launch profile named {name!r}; known profiles: {known}", "profile"
        )
    if found.get("disabled"):
        raise InvalidRequest(f"profile {name}: {found.get('reason')}", "profile")
    image = fields.pop("image", None)
    spec = LaunchSpec.create(image=image or DEFAULT_IMAGE, **fields)
    return spec, bool(image)


async def _warn_unless_placeable(engine: Engine[Any], name: str, config: dict[str, Any]) -> None:
    """Say on stderr, now, when the kernelspec's sessions could never run for this
    user (a size no agent can hold, a data folder not made yet, beyond the user's
    limits on a team's service): each of its kernels would fail to start for that
    reason. It is written anyway, as agents and folders may come later. The engine
    (a team's shared service, or this machine's) is asked with what each kernel will
    ask for (the kernelspec's ``config``, as the provisioner reads it); nothing is
    said when it does not answer."""
    from ..provisioning.options import LaunchOptions

    given = {k: v for k, v in config.items() if k != "launch_timeout"}
    try:
        spec = engine.make_spec(**LaunchOptions(**given).launch_fields())
        await engine.check(spec, owner=local_owner())
    except (InvalidRequest, NotFound) as exc:
        print(f"warning: kernel {name} cannot start as things are now: {exc}", file=sys.stderr)
    except ClusterError:
        pass  # e.g. the Docker engine or the service does not answer: nothing to judge by


def found_names(form: dict[str, Any]) -> list[str]:
    """The names of the profiles a launch form lists."""
    return [p["name"] for p in form.get("profiles") or []]
