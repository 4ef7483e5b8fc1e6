"""``jupyter cluster ssh`` and ``port-forward``: a session's containers from this machine.

Both ask the engine for the session's access (the local store, or the shared
service's owner-only key route in team mode), write the key, the containers' host
keys and an ssh config (:mod:`jupyter_cluster.core.ssh_client`) to a private
directory, run this machine's OpenSSH client with that config alone, and remove the
directory when it ends. ``ssh`` reaches main1 on its published port and the other
containers through it; host keys are checked strictly.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .. import private_dirs
from ..core.access import Access
from ..core.ssh_client import (
    check_host,
    client_files,
    forward_argv,
    parse_forward,
    split_target,
    ssh_argv,
)
from ..engine.api import Engine
from ..errors import ClusterError, InvalidRequest

#: Seconds ssh has to end once told to stop, before it is terminated (then killed).
STOP_GRACE = 3.0


@contextmanager
def _client_config(access: Access) -> Iterator[str]:
    """The path of an ssh config for ``access``, in a directory only this user can
    read, removed afterwards."""
    if shutil.which("ssh") is None:
        raise ClusterError("no ssh client here: install OpenSSH's client (e.g. openssh-client)")
    held = private_dirs.make("ssh-")
    directory = held.path
    try:
        key, known = os.path.join(directory, "key"), os.path.join(directory, "known_hosts")
        files = client_files(access, key, known)
        for path, text in ((key, files.key), (known, files.known_hosts)):
            with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as out:
                out.write(text)
        config = os.path.join(directory, "config")
        with open(os.open(config, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as out:
            out.write(files.config)
        yield config
    finally:
        held.remove()


def _run(argv: list[str]) -> tuple[int, bool]:
    """Run ``argv`` in this terminal; its exit code, and whether it was told to stop.
    SIGINT, SIGTERM and SIGHUP sent to this process go to it (Ctrl-C in a terminal
    reaches both anyway); if it has not ended :data:`STOP_GRACE` seconds later (ssh
    can wait for forwarded connections that stay open), it is terminated, then killed."""
    child = subprocess.Popen(argv)
    stopped: list[float] = []

    def forward(signum: int, _frame: Any) -> None:
        stopped.append(time.monotonic())
        child.send_signal(signum)

    signals = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    previous = {signum: signal.signal(signum, forward) for signum in signals}
    try:
        while True:
            try:
                return child.wait(timeout=0.5), bool(stopped)
            except subprocess.TimeoutExpired:
                if stopped and time.monotonic() - stopped[0] > 2 * STOP_GRACE:
                    child.kill()
                elif stopped and time.monotonic() - stopped[0] > STOP_GRACE:
                    child.terminate()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


async def ssh(engine: Engine[Any], args: argparse.Namespace) -> int:
    """``ssh SESSION [HOST] [-- CMD…]``: a login shell in HOST (main1 by default), or
    CMD there; returns ssh's exit code (255: ssh itself failed)."""
    host, command = split_target(args.rest)
    access = await engine.access(args.session)
    check_host(access, host)
    with _client_config(access) as config:
        code, _ = _run(ssh_argv(config, host, command))  # nothing else runs meanwhile
    return code


def _check_free(local: int, port: int) -> None:
    """InvalidRequest when 127.0.0.1:``local`` is taken here: ssh would only say that
    it could not request the forwarding, after ours said it forwards."""
    with socket.socket() as probe:
        # as ssh binds it: a port whose last connections are in TIME_WAIT is free
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", local))
        except OSError as exc:
            raise InvalidRequest(
                f"local port: 127.0.0.1:{local} is not free here ({exc.strerror}); give "
                f"another as {port}:LOCAL",
                "local port",
            ) from None


async def port_forward(engine: Engine[Any], args: argparse.Namespace) -> int:
    """``port-forward SESSION PORT[:LOCAL]``: 127.0.0.1:LOCAL here reaches PORT of
    main1 (its loopback) until Ctrl-C (or SIGTERM); returns 0 then, else ssh's exit
    code (e.g. 255 when LOCAL is taken)."""
    port, local = parse_forward(args.ports)
    _check_free(local, port)
    access = await engine.access(args.session)
    with _client_config(access) as config:
        print(
            f"forwarding 127.0.0.1:{local} to port {port} of main1 of {args.session} "
            "(Ctrl-C stops it; any user of this machine can connect to that address)",
            file=sys.stderr,
            flush=True,
        )
        code, stopped = _run(forward_argv(config, port, local))
    return 0 if stopped else code  # ssh says 255 when told to stop
