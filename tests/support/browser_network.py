"""The browser scripts run in a network namespace of their own, reaching the server
through Unix sockets.

Chromium fails every request it has in flight when the host's network interfaces
change (``net::ERR_NETWORK_CHANGED``), and Docker adds and removes interfaces for
every session, including those the browser tests launch themselves. A failed request
at the wrong moment lost the Lab's stylesheet or raised JupyterLab's "server
unreachable" dialog over the page. In a network namespace of its own Chromium sees
only its loopback interface, which nothing changes.

:func:`own_network` wraps a command so that it runs there (``unshare --net``; the
tests run as root in CI). Each server the command must reach (``127.0.0.1:port``)
is forwarded: inside, a listener on the same address and port passes each connection
to a Unix socket (a socket path reaches across network namespaces); outside, a
listener on that socket connects to the real server. So the URLs the scripts are
given stay as they are. Run as a program, this module is either side's forwarder:

    python -m tests.support.browser_network outside DIR PORT...
    python -m tests.support.browser_network inside DIR PORT... -- COMMAND...

Used by :func:`tests.support.lab.run_script` and the smaller Lab scripts' runner
(``tests/browser/test_lab_apps.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import functools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from urllib.parse import urlsplit

from .constants import REPO

LOOPBACK = "127.0.0.1"
#: Seconds the outside forwarder may take to listen.
READY_WITHIN = 10.0
#: prctl's option that gives a process a signal when its parent dies (linux/prctl.h).
PR_SET_PDEATHSIG = 1


def socket_path(directory: str, port: int) -> str:
    """The Unix socket that carries connections to ``127.0.0.1:port``."""
    return os.path.join(directory, f"{port}.sock")


def ports_of(urls: Sequence[str]) -> list[int]:
    """The loopback ports of ``urls`` (http on 127.0.0.1, as the tests' servers listen);
    ValueError for any other address, which the namespace could not reach."""
    ports = set()
    for url in urls:
        parts = urlsplit(url)
        if parts.hostname != LOOPBACK or parts.port is None:
            raise ValueError(f"{url}: the browser's namespace reaches only {LOOPBACK}:port")
        ports.add(parts.port)
    return sorted(ports)


@contextlib.contextmanager
def own_network(command: Sequence[str], urls: Sequence[str]) -> Iterator[list[str]]:
    """``command`` wrapped to run in a network namespace of its own, reaching the
    servers of ``urls``; the outside forwarder runs while the block does."""
    if shutil.which("unshare") is None:
        raise RuntimeError("no unshare (util-linux) to give the browser a network of its own")
    ports = [str(port) for port in ports_of(urls)]
    with tempfile.TemporaryDirectory(prefix="browser-net-") as directory:
        os.chmod(directory, 0o700)
        program = [sys.executable, "-m", "tests.support.browser_network"]
        outside = subprocess.Popen([*program, "outside", directory, *ports], cwd=REPO)
        try:
            deadline = time.monotonic() + READY_WITHIN
            while not all(os.path.exists(socket_path(directory, int(p))) for p in ports):
                if outside.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the outside forwarder did not listen ({outside.poll()})")
                time.sleep(0.02)
            yield ["unshare", "--net", "--", *program, "inside", directory, *ports, "--", *command]
        finally:
            outside.terminate()
            outside.wait(10)


def _die_with_parent() -> None:
    """In the command's process before it starts: be killed when this forwarder dies
    (a test's timeout kills the forwarder; node and its Chromium must not outlive it)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy until end of file, then pass the end on (a half-close, as HTTP may use)."""
    with contextlib.suppress(OSError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()


async def _join(
    first: tuple[asyncio.StreamReader, asyncio.StreamWriter],
    second: tuple[asyncio.StreamReader, asyncio.StreamWriter],
) -> None:
    """Carry one connection both ways until both sides are done, then close both."""
    try:
        await asyncio.gather(_pump(first[0], second[1]), _pump(second[0], first[1]))
    finally:
        for _, writer in (first, second):
            writer.close()


Connect = Callable[[], Awaitable[tuple[asyncio.StreamReader, asyncio.StreamWriter]]]
Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def _forwarding(connect: Connect) -> Handler:
    """A listener's handler that carries each connection to what ``connect`` opens."""

    async def carry(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            server = await connect()
        except OSError:
            writer.close()
            return
        await _join((reader, writer), server)

    return carry


async def _outside(directory: str, ports: list[int]) -> None:
    """Listen on each port's Unix socket; connect each connection to 127.0.0.1:port."""
    servers = [
        await asyncio.start_unix_server(
            _forwarding(functools.partial(asyncio.open_connection, LOOPBACK, port)),
            socket_path(directory, port),
        )
        for port in ports
    ]
    await asyncio.gather(*(server.serve_forever() for server in servers))


async def _inside(directory: str, ports: list[int], command: list[str]) -> int:
    """Bring loopback up, listen on 127.0.0.1:port for each port (each connection goes
    to its Unix socket), run ``command``; its exit code."""
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    servers = [
        await asyncio.start_server(
            _forwarding(
                functools.partial(asyncio.open_unix_connection, socket_path(directory, port))
            ),
            LOOPBACK,
            port,
        )
        for port in ports
    ]
    process = await asyncio.create_subprocess_exec(*command, preexec_fn=_die_with_parent)
    try:
        return await process.wait()
    finally:
        for server in servers:
            server.close()


def main(argv: list[str]) -> int:
    """Either side's forwarder (see the module's docstring)."""
    side, directory, *rest = argv
    if side == "outside":
        asyncio.run(_outside(directory, [int(p) for p in rest]))
        return 0
    split = rest.index("--")
    return asyncio.run(_inside(directory, [int(p) for p in rest[:split]], rest[split + 1 :]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
