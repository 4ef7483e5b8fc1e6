"""Unix sockets forwarded over a real SSH connection (an in-process asyncssh server on
loopback), held open until the far socket exists (jupyter_cluster.reach.unix_forward).

The far sockets stand for a kernel's in main1: they appear only once it has
imported enough to bind them, while its client is already connecting.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import statistics
import time
from collections.abc import AsyncIterator
from pathlib import Path

import asyncssh
import pytest

from jupyter_cluster.reach import unix_forward
from jupyter_cluster.reach.unix_forward import UnixForwards


class _OpenServer(asyncssh.SSHServer):
    """An SSH server that opens any Unix socket asked for."""

    def unix_connection_requested(self, dest_path: str) -> bool:
        return True


@pytest.fixture
async def conn() -> AsyncIterator[asyncssh.SSHClientConnection]:
    async for client in _connected(""):
        yield client


@pytest.fixture
async def forbidding_conn() -> AsyncIterator[asyncssh.SSHClientConnection]:
    """A connection whose key may not forward (``no-port-forwarding``): the server
    answers its channel requests "administratively prohibited"."""
    async for client in _connected("no-port-forwarding "):
        yield client


async def _connected(key_options: str) -> AsyncIterator[asyncssh.SSHClientConnection]:
    host_key = asyncssh.generate_private_key("ssh-ed25519")
    user_key = asyncssh.generate_private_key("ssh-ed25519")
    line = key_options + user_key.export_public_key().decode()
    server = await asyncssh.create_server(
        _OpenServer,
        "127.0.0.1",
        0,
        server_host_keys=[host_key],
        authorized_client_keys=asyncssh.import_authorized_keys(line),
    )
    port = server.sockets[0].getsockname()[1]
    client = await asyncssh.connect(
        "127.0.0.1", port, known_hosts=None, username="work", client_keys=[user_key], config=[]
    )
    yield client
    client.close()
    await client.wait_closed()
    server.close()
    await server.wait_closed()


async def far_echo(path: Path, accepted: list[str] | None = None) -> asyncio.AbstractServer:
    """A far socket at ``path`` that answers every chunk upper-cased, and ends its side
    when the other does; notes ``path``'s name in ``accepted`` at each connection."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if accepted is not None:
            accepted.append(path.name)
        while data := await reader.read(65536):
            writer.write(data.upper())
            await writer.drain()
        writer.close()

    return await asyncio.start_unix_server(serve, str(path))


@contextlib.asynccontextmanager
async def connected_through(
    forwards: UnixForwards, near: Path, far: Path
) -> AsyncIterator[tuple[asyncio.StreamReader, asyncio.StreamWriter]]:
    """A client's connection to ``near``, forwarded by ``forwards`` to ``far``; on
    leaving, the client's side and the forwards are closed."""
    await forwards.listen([str(near)], [str(far)])
    reader, writer = await asyncio.open_unix_connection(str(near))
    try:
        yield reader, writer
    finally:
        writer.close()
        await forwards.close()


async def read_exactly(reader: asyncio.StreamReader, n: int, timeout: float = 10) -> bytes:
    return await asyncio.wait_for(reader.readexactly(n), timeout)


async def test_a_connection_made_before_the_far_socket_exists_is_held_then_carried(
    conn: asyncssh.SSHClientConnection, tmp_path: Path
) -> None:
    near, far = tmp_path / "near-1", tmp_path / "far-1"
    async with connected_through(UnixForwards(conn), near, far) as (reader, writer):
        writer.write(b"greeting sent early")
        await asyncio.sleep(0.3)  # several tries fail meanwhile: nothing listens at far
        assert not reader.at_eof()
        async with await far_echo(far):
            assert await read_exactly(reader, 19) == b"GREETING SENT EARLY"
            writer.write(b"and later")
            assert await read_exactly(reader, 9) == b"AND LATER"


async def test_a_large_stream_passes_whole_both_ways(
    conn: asyncssh.SSHClientConnection, tmp_path: Path
) -> None:
    near, far = tmp_path / "near-1", tmp_path / "far-1"
    payload = os.urandom(4 << 20).hex().encode()[: 6 << 20]  # 6 MiB of lower-case hex
    async with (
        await far_echo(far),
        connected_through(UnixForwards(conn), near, far) as (reader, writer),
    ):

        async def send() -> None:
            writer.write(payload)
            await writer.drain()
            writer.write_eof()  # the far side ends once it has read it all

        sending = asyncio.ensure_future(send())
        got = await asyncio.wait_for(reader.read(), 60)
        await sending
        assert got == payload.upper()


async def test_connections_to_the_lead_socket_open_before_the_others(
    conn: asyncssh.SSHClientConnection, tmp_path: Path
) -> None:
    # As a kernel client does: shell (not the lead) connects first, IOPub (the lead)
    # next, both while the kernel is still starting; then the kernel binds shell, and
    # IOPub a moment later (as ipykernel does).
    forwards = UnixForwards(conn, lead=1)
    near = [str(tmp_path / "near-1"), str(tmp_path / "near-2")]
    far = [tmp_path / "far-shell", tmp_path / "far-iopub"]
    await forwards.listen(near, [str(p) for p in far])
    shell = await asyncio.open_unix_connection(near[0])
    await asyncio.sleep(0.1)
    iopub = await asyncio.open_unix_connection(near[1])
    await asyncio.sleep(0.1)
    accepted: list[str] = []
    servers = [await far_echo(far[0], accepted)]
    await asyncio.sleep(0.1)  # shell's far socket is there: its tries now succeed
    servers.append(await far_echo(far[1], accepted))
    try:
        for reader, writer in (shell, iopub):
            writer.write(b"x")
            assert await read_exactly(reader, 1) == b"X"
        assert accepted == ["far-iopub", "far-shell"]
    finally:
        for _, writer in (shell, iopub):
            writer.close()
        await forwards.close()
        for server in servers:
            server.close()


async def test_a_far_socket_that_never_appears_ends_the_local_connection(
    conn: asyncssh.SSHClientConnection, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(unix_forward, "OPEN_PATIENCE", 0.3)
    near, far = tmp_path / "near-1", tmp_path / "nothing-here"
    began = time.monotonic()
    async with connected_through(UnixForwards(conn), near, far) as (reader, _):
        assert await asyncio.wait_for(reader.read(), 10) == b""  # closed by the forwarder
        assert 0.3 <= time.monotonic() - began < 5


async def test_a_forwarding_the_server_forbids_ends_the_local_connection_at_once(
    forbidding_conn: asyncssh.SSHClientConnection, tmp_path: Path
) -> None:
    near, far = tmp_path / "near-1", tmp_path / "far-1"
    async with await far_echo(far):  # it exists: only the SSH server says no
        began = time.monotonic()
        forwards = UnixForwards(forbidding_conn)
        async with connected_through(forwards, near, far) as (reader, _):
            assert await asyncio.wait_for(reader.read(), 10) == b""
            assert time.monotonic() - began < 1.0  # not held for OPEN_PATIENCE


async def test_close_ends_held_connections_and_stops_listening(
    conn: asyncssh.SSHClientConnection, tmp_path: Path
) -> None:
    forwards = UnixForwards(conn)
    near = tmp_path / "near-1"
    await forwards.listen([str(near)], [str(tmp_path / "far-1")])
    reader, writer = await asyncio.open_unix_connection(str(near))
    writer.write(b"held")
    await asyncio.sleep(0.1)
    await forwards.close()
    assert await asyncio.wait_for(reader.read(), 10) == b""
    writer.close()
    with pytest.raises(OSError):
        await asyncio.open_unix_connection(str(near))
    # Nothing of it keeps running: no task is left trying to open the far socket.
    left = [t for t in asyncio.all_tasks() if "_open" in repr(t.get_coro())]
    assert left == []


async def test_a_stale_socket_file_at_the_local_path_is_replaced(
    conn: asyncssh.SSHClientConnection, tmp_path: Path
) -> None:
    near, far = tmp_path / "near-1", tmp_path / "far-1"
    stale = await asyncio.start_unix_server(lambda r, w: None, str(near))
    stale.close()  # its file stays, as after a dropped connection
    await stale.wait_closed()
    assert near.exists()
    async with (
        await far_echo(far),
        connected_through(UnixForwards(conn), near, far) as (reader, writer),
    ):
        writer.write(b"ok")
        assert await read_exactly(reader, 2) == b"OK"


async def test_a_far_socket_missing_for_long_is_asked_for_less_often(
    conn: asyncssh.SSHClientConnection, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A client left connected to a kernel that died must not make main1's sshd open
    # 50 channels a second per socket for ever: after OPEN_FAST_FOR, ZMQ's own pace.
    monkeypatch.setattr(unix_forward, "OPEN_FAST_FOR", 0.3)
    tries: list[float] = []

    class Counting:
        async def create_unix_connection(self, *args: object) -> object:
            tries.append(time.monotonic())
            return await conn.create_unix_connection(*args)  # type: ignore[arg-type]

    forwards = UnixForwards(Counting())  # type: ignore[arg-type]
    near = tmp_path / "near-1"
    await forwards.listen([str(near)], [str(tmp_path / "nothing-here")])
    began = time.monotonic()
    _, writer = await asyncio.open_unix_connection(str(near))
    await asyncio.sleep(1.3)
    writer.close()
    await forwards.close()
    # (when a try was made, how long after the one before it)
    gaps = [(b - began, b - a) for a, b in itertools.pairwise(tries)]
    early = [gap for at, gap in gaps if at < 0.25]
    late = [gap for at, gap in gaps if at > 0.45]
    assert early and late, tries
    assert statistics.median(early) < 0.06
    assert min(late) >= 0.09
