"""Carrying out a parsed ``jupyter cluster`` command (``logs``/``exec``/``top`` aside).

:func:`run` (called by :func:`~jupyter_cluster.cli.main.main` with the parsed
arguments) builds the engine and carries out ``launch``, ``ls``, ``show``, ``rm``,
``agents``, ``folder …``, ``usage``, ``audit``, ``limits``, ``kernelspec install`` and ``image
build``; the commands about a session's containers (``logs``, ``exec``, ``top``) are in
:mod:`.container_commands`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

from ..config import local_owner, make_engine
from ..core.batch import wait_code
from ..core.models import Session
from ..core.state import ENDED, SETTLING, USABLE
from ..engine.api import Engine
from ..errors import ClusterError
from ..paths import cluster_dir
from . import container_commands
from . import format as cli_format
from .launch_flags import launch_fields
from .records import record, record_launch


def _emit(args: argparse.Namespace, data: Any, text: str) -> None:
    print(json.dumps(data, indent=2) if getattr(args, "json", False) else text)


def _progress(session: Session) -> None:
    states = " ".join(f"{c.host}:{c.status.value}" for c in session.containers)
    reason = f" ({session.status_reason})" if session.status_reason else ""
    print(f"{session.name}: {session.status.value}{reason} [{states}]", file=sys.stderr)


async def _follow(engine: Engine[Any], session_id: str, done: Callable[[Session], bool]) -> Session:
    """Poll a session someone else drives, printing its progress, until ``done``."""
    last = None
    while True:
        session = await engine.get(session_id)
        seen = (session.status, session.status_reason, [c.status for c in session.containers])
        if seen != last:
            _progress(session)
            last = seen
        if done(session):
            return session
        await asyncio.sleep(0.5)


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
        if args.image_command == "build":
            from ..images.build import build_kernel_image

            await build_kernel_image(tag=args.tag, base=args.base)
            return 0
        from .image_commands import image_to_agents

        return await image_to_agents(make_engine(), args)
    if args.command == "kernelspec":
        return await _kernelspec(args)
    engine = make_engine()
    try:
        if args.command == "folder":
            return await _folder(engine, args)
        if args.command == "usage":
            from .usage_commands import usage

            return await usage(engine, args)
        if args.command == "audit":
            from .audit_commands import audit

            return await audit(engine, args)
        if args.command == "limits":
            from .limits_commands import limits

            return await limits(engine, args)
        if args.command == "profile":
            from .profile_commands import profile

            return await profile(engine, args)
        if args.command == "launch" and not args.profile:  # bad flags: refused before any
            engine.make_spec(**launch_fields(args))  # agent is asked
        await engine.start()
        return await _command(engine, args)
    finally:
        await engine.close()


async def _kernelspec(args: argparse.Namespace) -> int:
    from .kernelspec_commands import install

    return await install(args)


async def _folder(engine: Engine[Any], args: argparse.Namespace) -> int:
    owner = local_owner()
    if args.folder_command == "cp" or getattr(args, "ref", None):
        from .folder_commands import folder_cp, folder_ls

        return await (folder_cp if args.folder_command == "cp" else folder_ls)(engine, args)
    if args.folder_command == "create":
        info = await engine.create_folder(args.name, owner)
        record(engine, "folder_create", details={"folder": info.name})
        print(f"created data folder {info.name} at {info.path}")
    elif args.folder_command == "rm" and ("/" in args.name or ":" in args.name):
        from .folder_commands import folder_rm_path

        return await folder_rm_path(engine, args)
    elif args.folder_command == "rm":
        await engine.remove_folder(args.name, owner)
        record(engine, "folder_remove", details={"folder": args.name})
        print(f"removed data folder {args.name}")
    elif args.folder_command == "mv":
        info = await engine.rename_folder(args.name, args.new_name, owner)
        if info.name == args.name:  # checked (it is yours, not in use), nothing renamed
            print(f"data folder {args.name} has that name already; nothing renamed")
        else:
            record(engine, "folder_rename", details={"folder": args.name, "to": info.name})
            print(f"renamed data folder {args.name} to {info.name}")
    else:
        folders = await engine.list_folders(owner)
        rows = [(f.name, f.path) for f in folders]
        _emit(args, [f.to_dict() for f in folders], cli_format.table(("NAME", "PATH"), rows))
    return 0


async def _command(engine: Engine[Any], args: argparse.Namespace) -> int:
    cmd = args.command
    if cmd == "launch":
        if args.profile:
            from .profile_commands import admit

            spec = admit(engine, args)
        else:
            spec = engine.make_spec(**launch_fields(args))
        if args.dry_run:
            found = await engine.check(spec, owner=local_owner())
            _emit(args, found.to_dict(), found.describe())
            return 0
        session = await engine.submit(spec, owner=local_owner())
        record_launch(engine, session)
        if session.spec.command:  # a batch job outlives this process: a driver has it
            await engine.hand_off(session, _spawn_driver)
            args.goes_on = session.name  # Ctrl-C from now on leaves it running
            if not args.no_wait:
                session = await _follow(engine, session.id, lambda s: s.status not in SETTLING)
        elif args.no_wait:  # a detached driver, unless the engine drives it itself
            await engine.hand_off(session, _spawn_driver)
            args.goes_on = session.name
        else:
            session = await engine.drive(session.id, on_change=_progress)
            if session.status not in USABLE:  # cancelled or ended (pending_timeout, rm)
                raise ClusterError(
                    f"session {session.name}: {session.status.value} ({session.status_reason})"
                )
        _emit(args, session.to_dict(), cli_format.session_details(session))
        return 0
    if cmd == "wait":
        session = await engine.get(args.session)
        if session.spec.command and session.status in USABLE:  # its driver may have died
            await engine.hand_off(session, _spawn_driver)
        args.goes_on = session.name  # waiting for it changes nothing of it
        session = await _follow(engine, session.id, lambda s: s.status in ENDED)
        _emit(args, session.to_dict(), cli_format.session_details(session))
        return wait_code(session.status.value, session.status_reason, session.job)
    if cmd == "ls":
        sessions = await engine.list(include_ended=args.all)
        _emit(args, [s.to_dict() for s in sessions], cli_format.sessions_table(sessions))
    elif cmd == "show":
        session = await engine.get(args.session)
        _emit(args, session.to_dict(), cli_format.session_details(session))
    elif cmd == "logs":
        await container_commands.logs(engine, args)
    elif cmd == "exec":
        return await container_commands.exec_in(engine, args)
    elif cmd == "ssh":
        from . import ssh_commands

        return await ssh_commands.ssh(engine, args)
    elif cmd == "port-forward":
        from . import ssh_commands

        return await ssh_commands.port_forward(engine, args)
    elif cmd == "top":
        await container_commands.top(engine, args)
    elif cmd == "rm":
        ended = []
        for ref in args.sessions:
            ended.append(await engine.terminate(ref))
            record(engine, "terminate", ended[-1], {"reason": "requested"})
        _emit(
            args,
            [s.to_dict() for s in ended],
            "\n".join(f"{s.name} {s.id}: {s.status.value}" for s in ended),
        )
    elif cmd == "agents":
        rows = await engine.agents_info()
        _emit(args, rows, cli_format.agents_table(rows))
    return 0
