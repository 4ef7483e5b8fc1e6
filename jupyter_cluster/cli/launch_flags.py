"""The launch flags of ``jupyter cluster launch``, shared with ``kernelspec install``,
``profile save`` and the ``%cluster launch`` magic, and the ``make_spec`` keywords
they give.

:mod:`.parser` adds them to its subcommands with :func:`add_launch_arguments`;
:mod:`.commands` and :mod:`.kernelspec_commands` turn what was parsed into
``ClusterManager.make_spec`` keywords with :func:`launch_fields`.
"""

from __future__ import annotations

import argparse
from typing import Any


def add_launch_arguments(parser: argparse.ArgumentParser) -> None:
    """The launch flags, shared with ``kernelspec install``."""
    parser.add_argument("--image", default=None, help="kernel image (default: the configured)")
    parser.add_argument("--size", default="1", help="number of containers (main1 + subs)")
    parser.add_argument("--mode", default="single-node", help="single-node or multi-node")
    parser.add_argument("--cpu", default="1", help="CPUs per container, e.g. 0.5")
    parser.add_argument("--mem", default="1g", help="memory per container, e.g. 512m, 2g")
    parser.add_argument("--shm", default="64m", help="shared memory per container")
    parser.add_argument("--gpu", default="0", help="GPUs per container")
    parser.add_argument(
        "--mount", action="append", default=[], metavar="NAME[:ro]", help="data folder to mount"
    )
    parser.add_argument("--resource-group", default="default")
    parser.add_argument("--name", default=None, help="a name to refer to the session by")
    parser.add_argument("--bootstrap", default=None, help="shell command run in every container")
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="environment variable of every container, the kernel, exec, terminals and SSH "
        "(repeatable; shown by name only)",
    )
    parser.add_argument(
        "--app",
        action="append",
        default=[],
        metavar="NAME=PORT",
        help="a web app in main1 on PORT, listed by the session and opened through the "
        "server's app proxy, e.g. tensorboard=6006 (repeatable)",
    )


def launch_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The launch flags as keyword arguments of ``ClusterManager.make_spec``."""
    fields = {
        "size": args.size,
        "mode": args.mode,
        "cpu": args.cpu,
        "mem": args.mem,
        "shm": args.shm,
        "gpu": args.gpu,
        "mounts": args.mount,
        "resource_group": args.resource_group,
        "name": args.name,
        "bootstrap": args.bootstrap,
        "env": args.env or None,
        "apps": getattr(args, "app", None) or None,
    }
    if args.image:
        fields["image"] = args.image
    if getattr(args, "job_command", None) is not None:
        fields["command"] = args.job_command
    if getattr(args, "max_lifetime", None) is not None:
        fields["max_lifetime"] = args.max_lifetime
    if getattr(args, "retries", 0):
        fields["retries"] = args.retries
    if getattr(args, "priority", None) is not None:
        fields["priority"] = args.priority
    return fields
