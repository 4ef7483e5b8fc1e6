"""``jupyter cluster …``: the command-line front end of the engine.

Parses arguments with argparse, reads configuration from the usual Jupyter config
files (``jupyter_cluster_config.py``) through :mod:`jupyter_cluster.config`, and calls
:class:`~jupyter_cluster.engine.manager.ClusterManager`. Bad input exits with code 2 and
one line on stderr; a failed launch or agent error exits with 1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import subprocess
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from ..config import local_owner, make_manager
from ..core.fanout import LinePrefixer, worst_exit
from ..core.models import Session
from ..core.naming import DEFAULT_IMAGE
from ..core.state import FINAL, USABLE
from ..engine.drivers import this_process
from ..engine.manager import ClusterManager
from ..errors import ClusterError, Conflict, InvalidRequest, NotFound
from ..paths import cluster_dir
from . import format as cli_format

#: The module ``serve`` runs (the CLI does not import the server extension itself).
SERVE_MODULE = "jupyter_cluster.server.serve"


def _one_line(text: str) -> str:
    """``text`` with what a terminal would not print as is (newlines, escape
    sequences, bidi controls) escaped: user input quoted in a message stays on one line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"jupyter cluster: error: {_one_line(message)} (see --help)\n")


def _seconds(text: str) -> float:
    """An argparse type: a finite number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"give seconds above 0, e.g. 300, not {text!r}")
    return value


def _unreadable(argv: Sequence[str]) -> str | None:
    """The first argument that is not text a command can use: a NUL, or bytes that
    are not UTF-8 (Python keeps those as lone surrogates)."""
    for arg in argv:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            return arg
        if "\0" in arg:
            return arg
    return None


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = _Parser(prog="jupyter cluster", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    launch = sub.add_parser("launch", help="launch a cluster session")
    add_launch_arguments(launch)
    launch.add_argument("--no-wait", action="store_true", help="return at once (e.g. PENDING)")
    launch.add_argument("--json", action="store_true")

    ls = sub.add_parser("ls", help="list sessions")
    ls.add_argument("--all", action="store_true", help="include ended sessions (history)")
    ls.add_argument("--json", action="store_true")
    show = sub.add_parser("show", help="show one session")
    show.add_argument("session")
    show.add_argument("--json", action="store_true")
    logs = sub.add_parser("logs", help="print one container's log")
    logs.add_argument("session")
    logs.add_argument("host")
    logs.add_argument("--tail", type=int, default=None, help="only the last N lines")
    logs.add_argument("--follow", "-f", action="store_true", help="keep printing new lines")
    exe = sub.add_parser("exec", help="run a command as work in one container (or in all: --all)")
    exe.add_argument("session")
    exe.add_argument(
        "--all",
        action="store_true",
        help="run it in every container at once; lines come prefixed with the host, "
        "the exit status is the worst",
    )
    exe.add_argument("host", nargs="?", help="the container (main1, sub1…), unless --all")
    exe.add_argument("cmd", nargs=argparse.REMAINDER, help="-- COMMAND [ARG…]")
    top = sub.add_parser("top", help="each container's CPU, memory, network, disk (and GPU) use")
    top.add_argument("session")
    top.add_argument("--json", action="store_true", help="one sample as JSON")
    top.add_argument("--once", action="store_true", help="one table, then exit")
    top.add_argument("--interval", type=_seconds, default=2.0, help="seconds between tables")
    rm = sub.add_parser("rm", help="terminate sessions (or cancel pending ones)")
    rm.add_argument("sessions", nargs="+")
    rm.add_argument("--json", action="store_true")
    agents = sub.add_parser("agents", help="capacity, allocated and free per agent")
    agents.add_argument("--json", action="store_true")

    folder = sub.add_parser("folder", help="manage named data folders")
    fsub = folder.add_subparsers(dest="folder_command", required=True, parser_class=_Parser)
    fsub.add_parser("create", help="create a data folder").add_argument("name")
    fsub.add_parser("rm", help="delete a data folder and its content").add_argument("name")
    fls = fsub.add_parser("ls", help="list data folders")
    fls.add_argument("--json", action="store_true")

    kspec = sub.add_parser("kernelspec", help="install a kernelspec that runs in main1")
    ksub = kspec.add_subparsers(dest="kernelspec_command", required=True, parser_class=_Parser)
    kinstall = ksub.add_parser("install", help="write a cluster kernelspec")
    kinstall.add_argument("kernel_name", metavar="NAME")
    kinstall.add_argument("--display-name", default=None)
    add_launch_arguments(kinstall)
    kinstall.add_argument("--launch-timeout", type=_seconds, default=300.0)
    where = kinstall.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="install for this user only")
    where.add_argument("--sys-prefix", action="store_true", help="install into sys.prefix")
    where.add_argument("--prefix", default=None, help="install under this prefix")

    image = sub.add_parser("image", help="build the default kernel image")
    isub = image.add_subparsers(dest="image_command", required=True, parser_class=_Parser)
    build = isub.add_parser("build", help=f"build {DEFAULT_IMAGE}")
    build.add_argument("--tag", default=DEFAULT_IMAGE)
    build.add_argument("--base", default=None, help="base image (default: Debian bookworm)")
    serve = sub.add_parser(
        "serve",
        help="run the shared service of a team (as a JupyterHub service; see the README)",
    )
    serve.add_argument(
        "server_args",
        nargs=argparse.REMAINDER,
        help="Jupyter server options, e.g. --ClusterManager.db_path=/srv/cluster/db.sqlite",
    )
    return parser


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
    }
    if args.image:
        fields["image"] = args.image
    return fields


def _emit(args: argparse.Namespace, data: Any, text: str) -> None:
    print(json.dumps(data, indent=2) if getattr(args, "json", False) else text)


def _progress(session: Session) -> None:
    states = " ".join(f"{c.host}:{c.status.value}" for c in session.containers)
    reason = f" ({session.status_reason})" if session.status_reason else ""
    print(f"{session.name}: {session.status.value}{reason} [{states}]", file=sys.stderr)


def _spawn_driver(session_id: str) -> int:
    """Start a detached process that drives a --no-wait launch to the end."""
    log_dir = os.path.join(cluster_dir(), "drivers")
    os.makedirs(log_dir, exist_ok=True)
    with open(os.path.join(log_dir, f"{session_id}.log"), "ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "jupyter_cluster.cli.driver", session_id],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return proc.pid


async def run(args: argparse.Namespace) -> int:
    """Carry out one parsed command; returns the exit code."""
    if args.command == "image":
        from ..images.build import build_kernel_image

        await build_kernel_image(tag=args.tag, base=args.base)
        return 0
    if args.command == "kernelspec":
        return _kernelspec(args)
    manager = make_manager()
    try:
        if args.command == "folder":
            return await _folder(manager, args)
        if args.command == "launch":  # bad flags are refused before any agent is asked
            manager.make_spec(**launch_fields(args))
        await manager.start()
        return await _command(manager, args)
    finally:
        await manager.close()


def _kernelspec(args: argparse.Namespace) -> int:
    from ..core.models import LaunchSpec
    from ..provisioning import kernelspec

    fields = launch_fields(args)
    spec = LaunchSpec.create(image=fields.pop("image", DEFAULT_IMAGE), **fields)
    config = kernelspec.provisioner_config(spec, bool(args.image), args.launch_timeout)
    display = args.display_name or kernelspec.display_name(spec)
    path = kernelspec.install(
        args.kernel_name,
        display,
        config,
        user=args.user,
        sys_prefix=args.sys_prefix,
        prefix=args.prefix,
    )
    print(f"installed kernelspec {args.kernel_name} in {path}")
    return 0


async def _folder(manager: ClusterManager, args: argparse.Namespace) -> int:
    owner = local_owner()
    if args.folder_command == "create":
        info = await manager.create_folder(args.name, owner)
        print(f"created data folder {info.name} at {info.path}")
    elif args.folder_command == "rm":
        await manager.remove_folder(args.name, owner)
        print(f"removed data folder {args.name}")
    else:
        folders = await manager.list_folders(owner)
        rows = [(f.name, f.path) for f in folders]
        _emit(args, [f.to_dict() for f in folders], cli_format.table(("NAME", "PATH"), rows))
    return 0


async def _command(manager: ClusterManager, args: argparse.Namespace) -> int:
    cmd = args.command
    if cmd == "launch":
        spec = manager.make_spec(**launch_fields(args))
        session = await manager.submit(spec, owner=local_owner())
        if args.no_wait:  # the shared service drives its launches itself
            if session.status.value in ("PENDING", "PREPARING") and not manager.remote:
                pid = _spawn_driver(session.id)
                manager.store.set_driver(session.id, this_process(pid))
        else:
            session = await manager.drive(session.id, on_change=_progress)
            if session.status in FINAL:  # cancelled (pending_timeout, rm) before it ran
                raise ClusterError(
                    f"session {session.name}: {session.status.value} ({session.status_reason})"
                )
        _emit(args, session.to_dict(), cli_format.session_details(session))
        return 0
    if cmd == "ls":
        sessions = await manager.list(include_ended=args.all)
        _emit(args, [s.to_dict() for s in sessions], cli_format.sessions_table(sessions))
    elif cmd == "show":
        session = await manager.get(args.session)
        _emit(args, session.to_dict(), cli_format.session_details(session))
    elif cmd == "logs":
        async for line in manager.logs(args.session, args.host, tail=args.tail, follow=args.follow):
            sys.stdout.write(line)
            sys.stdout.flush()
    elif cmd == "exec":
        return await _exec(manager, args)
    elif cmd == "top":
        await _top(manager, args)
    elif cmd == "rm":
        ended = [await manager.terminate(ref) for ref in args.sessions]
        _emit(
            args,
            [s.to_dict() for s in ended],
            "\n".join(f"{s.name} {s.id}: {s.status.value}" for s in ended),
        )
    elif cmd == "agents":
        rows = await manager.agents_info()
        _emit(args, rows, cli_format.agents_table(rows))
    return 0


async def _top(manager: ClusterManager, args: argparse.Namespace) -> None:
    """One sample (``--json``, ``--once``) or a table refreshed until interrupted."""
    session = await manager.get(args.session)
    while True:
        found = await manager.stats(session.id)
        if args.json:
            print(json.dumps({h: u.to_dict() if u else None for h, u in found.items()}))
            return
        clear = "\x1b[H\x1b[2J" if sys.stdout.isatty() and not args.once else ""
        print(f"{clear}{session.name} {session.id}\n{cli_format.usage_table(found)}", flush=True)
        if args.once:
            return
        await asyncio.sleep(args.interval)


def _exec_command(args: argparse.Namespace) -> list[str]:
    """The command of ``exec`` (with ``--all``, argparse may take its first word for HOST,
    or keep ``--all`` itself in the command: REMAINDER takes what follows the session)."""
    if not args.host and args.cmd[:1] == ["--all"]:
        args.all, args.cmd = True, args.cmd[1:]
    elif args.host == "--all":
        args.all, args.host = True, None
    if args.cmd[:1] == ["--all"]:
        args.all, args.cmd = True, args.cmd[1:]
    if args.all and args.cmd[:1] != ["--"] and "--" in args.cmd:  # --all HOST -- CMD
        raise InvalidRequest("give either a HOST or --all, not both", "host")
    if args.all and args.host and args.cmd[:1] == ["--"]:
        raise InvalidRequest("give either a HOST or --all, not both", "host")
    words = [args.host, *args.cmd] if args.all and args.host else args.cmd
    if not args.all and not args.host:
        raise InvalidRequest("give a HOST (main1, sub1…) or --all", "host")
    command = words[1:] if words[:1] == ["--"] else words
    if not command:
        raise InvalidRequest("give a command to run, e.g. -- hostname", "cmd")
    return list(command)


async def _exec_all(manager: ClusterManager, args: argparse.Namespace, cmd: list[str]) -> int:
    session = await manager.get(args.session)
    if session.status not in USABLE:
        raise InvalidRequest(f"session {session.name} is {session.status.value}, not running")
    width = max(len(h) for h in session.hosts)
    out, err = sys.stdout.buffer, sys.stderr.buffer

    async def one(host: str) -> int:
        streams = {1: LinePrefixer(host, width), 2: LinePrefixer(host, width)}

        def write(stream: int, data: bytes) -> None:
            target = err if stream == 2 else out
            target.write(streams[stream].feed(data))
            target.flush()

        try:
            return await manager.exec(session.id, host, cmd, on_output=write)
        except ClusterError as exc:  # one container failing does not stop the others
            write(2, f"{exc}\n".encode())
            return 255
        finally:
            out.write(streams[1].close())
            err.write(streams[2].close())

    return worst_exit(await asyncio.gather(*(one(h) for h in session.hosts)))


async def _exec(manager: ClusterManager, args: argparse.Namespace) -> int:
    command = _exec_command(args)
    if args.all:
        return await _exec_all(manager, args, command)

    def write(stream: int, data: bytes) -> None:
        target = sys.stderr.buffer if stream == 2 else sys.stdout.buffer
        target.write(data)
        target.flush()

    return await manager.exec(args.session, args.host, command, on_output=write)


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """Entry point of ``jupyter-cluster`` / ``jupyter cluster``."""
    parser = build_parser()
    given = list(sys.argv[1:] if argv is None else argv)
    if given[:1] == ["serve"] and given[1:2] not in (["-h"], ["--help"]):
        # everything after `serve` is the Jupyter server's (--Class.trait=value …)
        os.execv(sys.executable, [sys.executable, "-m", SERVE_MODULE, *given[1:]])
    bad = _unreadable(given)
    if bad is not None:
        parser.error(f"argument {bad!r} is not text (a NUL, or bytes that are not UTF-8)")
    args = parser.parse_args(argv)
    try:
        code = asyncio.run(run(args))
    except (InvalidRequest, NotFound, Conflict) as exc:
        print(f"jupyter cluster: error: {exc}", file=sys.stderr)
        code = 2
    except ClusterError as exc:
        print(f"jupyter cluster: {exc}", file=sys.stderr)
        code = 1
    except BrokenPipeError:  # e.g. `jupyter cluster show X | head`
        sys.stderr.close()
        code = 0
    except KeyboardInterrupt:
        print("jupyter cluster: interrupted; the launch was cancelled", file=sys.stderr)
        code = 130
    sys.exit(code)


if __name__ == "__main__":
    main()
