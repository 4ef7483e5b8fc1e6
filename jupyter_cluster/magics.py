"""``%cluster`` in an ordinary (local) kernel: ls, show, logs, exec, launch, rm.

Loaded with ``%load_ext jupyter_cluster``. Calls the engine in this process
through :mod:`jupyter_cluster.session`; ``launch --profile NAME [flags]`` is checked
by that engine's launch gate as the CLI's ``launch --profile`` and REST are. Inside
a cluster container the package's ``load_ipython_extension`` loads
:mod:`jupyter_cluster.runtime.incluster` instead (hosts, status, logs and exec of the
session the kernel runs in).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Any

from . import session as notebook_api
from .background_engine import BackgroundEngine
from .cli import format as cli_format
from .cli.launch_flags import add_launch_arguments
from .config import local_owner
from .core.fanout import LinePrefixer, worst_exit
from .core.naming import MAIN_HOST
from .core.ssh_client import shell_words, split_target
from .errors import ClusterError
from .runtime.incluster import MagicError, MagicParser

USAGE = """%cluster ls [--all]                    sessions
%cluster show SESSION                  one session and its containers
%cluster logs SESSION [HOST] [--tail N] [--follow]
%cluster exec SESSION [HOST] -- CMD…   run a command as work in a container (main1)
%cluster exec SESSION --all -- CMD…    … in every container at once (lines prefixed)
%cluster launch                        the launch form (profiles first)
%cluster launch --profile NAME [FLAGS] launch a profile now, the flags on top
                                       (the CLI's launch flags: --size, --cpu, --mem…;
                                       --dry-run: only say where it would start)
%cluster top SESSION                   each container's CPU, memory, network, disk
%cluster rm SESSION…                   terminate (or cancel) sessions"""


class _Parser(MagicParser):
    usage_text = USAGE


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="%cluster", add_help=False)
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    sub.add_parser("ls", add_help=False).add_argument("--all", action="store_true")
    sub.add_parser("show", add_help=False).add_argument("session")
    logs = sub.add_parser("logs", add_help=False)
    logs.add_argument("session")
    logs.add_argument("host", nargs="?", default=MAIN_HOST)
    logs.add_argument("--tail", type=int, default=None)
    logs.add_argument("--follow", "-f", action="store_true")
    exe = sub.add_parser("exec", add_help=False)
    exe.add_argument("session")
    exe.add_argument("rest", nargs=argparse.REMAINDER)  # [HOST] -- CMD, as the CLI's
    launch = sub.add_parser("launch", add_help=False)
    add_launch_arguments(launch)  # checked here; given_fields takes those given
    launch.add_argument("--profile", default=None)
    launch.add_argument("--dry-run", action="store_true")
    sub.add_parser("top", add_help=False).add_argument("session")
    sub.add_parser("rm", add_help=False).add_argument("sessions", nargs="+")
    return parser


def run(argv: list[str]) -> Any:
    """Carry out one ``%cluster`` line; returns what the cell should show."""
    if argv[:1] == ["exec"] and argv[2:3] == ["--all"]:  # SESSION --all -- CMD
        return _exec_all(argv[1], argv[3:])
    args = _parser().parse_args(argv)
    if args.command is None:
        raise MagicError(USAGE)
    if args.command == "ls":
        sessions = [s.model for s in notebook_api.ClusterSession.list(include_ended=args.all)]
        print(cli_format.sessions_table(sessions))
    elif args.command == "show":
        print(cli_format.session_details(notebook_api.ClusterSession.attach(args.session).model))
    elif args.command == "logs":
        session = notebook_api.ClusterSession.attach(args.session)
        if args.follow:
            session.logs(args.host, tail=args.tail, follow=True)
        else:
            print(session.logs(args.host, tail=args.tail), end="")
    elif args.command == "exec":
        host, command = split_target(args.rest)
        if not command:
            raise MagicError("give a command: %cluster exec SESSION [HOST] -- CMD")
        result = notebook_api.ClusterSession.attach(args.session).exec(host, shell_words(command))
        sys.stdout.write(result.stdout)
        sys.stderr.write(result.stderr)
        if result.exit_code:
            print(f"%cluster: exit code {result.exit_code}", file=sys.stderr)
    elif args.command == "top":
        print(cli_format.usage_table(notebook_api.ClusterSession.attach(args.session).stats()))
    elif args.command == "launch":
        if args.profile is not None:
            return _launch_profile(args.profile, argv[1:], dry_run=args.dry_run)
        if len(argv) > 1:
            raise MagicError("launch flags go with --profile NAME; %cluster launch: the form")
        from .widgets import LaunchForm

        return LaunchForm()
    elif args.command == "rm":
        for ref in args.sessions:
            ended = notebook_api.ClusterSession.attach(ref).terminate()
            print(f"{ended.name} {ended.id}: {ended.status.value}")
    return None


def _launch_profile(
    name: str, argv: list[str], dry_run: bool = False
) -> notebook_api.ClusterSession | None:
    """``%cluster launch --profile NAME [flags]``: the profile's fields with the flags
    given on top, admitted by the engine's launch gate (an unknown profile, or one the
    limits refuse, raises its reason), launched and waited for; prints the session.
    With ``dry_run``, prints where it would start or why it would wait (the engine's
    check raises what the launch would) and launches nothing."""
    from .cli.profile_commands import given_fields

    body = {"profile": name, **given_fields(argv)}
    spec = BackgroundEngine.get().gate().admit(body, local_owner()).spec
    if dry_run:
        print(notebook_api.ClusterSession.check_spec(spec).describe())
        return None
    session = notebook_api.ClusterSession.launch_spec(spec)
    print(cli_format.session_details(session.model))
    return session


def _exec_all(ref: str, cmd: list[str]) -> None:
    """``%cluster exec SESSION --all -- CMD``: every container's output, host-prefixed."""
    command = cmd[1:] if cmd[:1] == ["--"] else cmd
    if not command:
        raise MagicError("give a command: %cluster exec SESSION --all -- CMD")
    results = notebook_api.ClusterSession.attach(ref).exec_all(shell_words(command))
    width = max(len(h) for h in results)
    for host, result in results.items():
        for text, stream in ((result.stdout, sys.stdout), (result.stderr, sys.stderr)):
            prefixer = LinePrefixer(host, width)
            data = prefixer.feed(text.encode()) + prefixer.close()
            stream.write(data.decode(errors="replace"))
    code = worst_exit(r.exit_code for r in results.values())
    if code:
        print(f"%cluster: exit code {code}", file=sys.stderr)


def cluster_magic(line: str) -> Any:
    """The ``%cluster`` line magic of a local kernel."""
    try:
        return run(shlex.split(line))
    except (MagicError, ClusterError, ValueError) as exc:
        print(f"%cluster: {exc}", file=sys.stderr)
        return None


def load_ipython_extension(ipython: Any) -> None:
    """Register ``%cluster`` (host side)."""
    ipython.register_magic_function(cluster_magic, magic_kind="line", magic_name="cluster")
