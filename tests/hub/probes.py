"""What an attacker on the team's host runs, as a Unix user of its own (not imported).

Run with the users' Python by :mod:`tests.hub.test_attackers_kernels` under
``setpriv`` as another user; prints one JSON object on stdout when it ends.

- ``watch STOP UID``: until the file STOP exists, reads every process's
  ``cmdline`` and ``environ`` it can (keeping whatever mentions a key or a
  connection), and tries ``/proc/<pid>/root`` and ``environ`` of every process
  running as UID (the sessions' ``work``): how many it saw, read, was denied.
- ``listen STOP``: subscribes with plain ZMQ SUB sockets to every TCP listener on
  this host's loopback and every Unix socket it can name, until STOP exists: what
  arrived (IOPub needs no key to read).
- ``rootfs UID``: once, tries ``/proc/<pid>/root/home/work`` of every process of UID.
- ``flood SOCKET PATH N STOP``: opens N HTTP streams ``GET PATH`` on the Unix socket
  SOCKET with the token of ``$JUPYTERHUB_API_TOKEN``, prints a first JSON line with
  how many got each status once all have answered, holds the open ones until STOP
  exists, then closes them (X8: one user's streams against everyone's launches).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

WORDS = (b"key", b"JC_CONNECTION", b"JC_HANDOFF", b"hmac", b"BEGIN OPENSSH")


def _pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def _uid_of(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("Uid:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def rootfs(uid: int) -> dict[str, object]:
    """Try every process of ``uid``: its root directory and its environment."""
    seen, opened, denied = 0, [], 0
    for pid in _pids():
        if _uid_of(pid) != uid:
            continue
        seen += 1
        for path in (f"/proc/{pid}/root/home/work", f"/proc/{pid}/environ"):
            try:
                if path.endswith("environ"):
                    with open(path, "rb") as f:
                        f.read(1)
                else:
                    os.listdir(path)
                opened.append(path)
            except OSError:
                denied += 1
    return {"seen": seen, "opened": opened, "denied": denied}


def watch(stop: str, uid: int) -> dict[str, object]:
    """Watch every process's command line and environment until ``stop`` exists."""
    found: set[str] = set()
    rounds, most_seen, denied = 0, 0, 0
    opened: set[str] = set()
    while not os.path.exists(stop):
        rounds += 1
        for pid in _pids():
            for name in ("cmdline", "environ"):
                try:
                    with open(f"/proc/{pid}/{name}", "rb") as f:
                        data = f.read()
                except OSError:
                    continue
                if any(word in data for word in WORDS):
                    found.add(data.decode(errors="replace"))
        if rounds % 20 == 0:
            tried = rootfs(uid)
            most_seen = max(most_seen, int(str(tried["seen"])))
            opened.update(str(p) for p in tried["opened"])  # type: ignore[attr-defined]
            denied += int(str(tried["denied"]))
        time.sleep(0.01)
    rootfs_tally = {"seen": most_seen, "opened": sorted(opened), "denied": denied}
    return {"rounds": rounds, "found": sorted(found), "rootfs": rootfs_tally}


def _endpoints() -> list[str]:
    """Every loopback TCP listener and every named Unix socket this user can see."""
    points = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, state = fields[1], fields[3]
            if state == "0A":  # LISTEN
                points.append(f"tcp://127.0.0.1:{int(local.rsplit(':', 1)[1], 16)}")
    try:
        for line in Path("/proc/net/unix").read_text().splitlines()[1:]:
            fields = line.split()
            if len(fields) >= 8 and fields[7].startswith("/"):
                points.append(f"ipc://{fields[7]}")
    except OSError:
        pass
    return sorted(set(points))


def listen(stop: str) -> dict[str, object]:
    """Subscribe to everything until ``stop`` exists; what came in."""
    import zmq

    context = zmq.Context()
    poller = zmq.Poller()
    tried: list[str] = []
    frames: list[str] = []
    sockets = {}
    deadline_scan = 0.0
    while not os.path.exists(stop):
        if time.monotonic() > deadline_scan:  # new listeners appear as kernels start
            deadline_scan = time.monotonic() + 1.0
            for point in _endpoints():
                if point in sockets:
                    continue
                sub = context.socket(zmq.SUB)
                sub.setsockopt(zmq.SUBSCRIBE, b"")
                sub.setsockopt(zmq.LINGER, 0)
                try:
                    sub.connect(point)
                except zmq.ZMQError:
                    sub.close()
                    continue
                sockets[point] = sub
                poller.register(sub, zmq.POLLIN)
                tried.append(point)
        for sub, _ in poller.poll(100):
            frames += [f.decode(errors="replace") for f in sub.recv_multipart()]
    for sub in sockets.values():
        sub.close()
    context.term()
    return {"tried": tried, "frames": frames[-2000:]}


def flood(socket_path: str, path: str, count: int, stop: str) -> dict[str, object]:
    import socket

    token = os.environ["JUPYTERHUB_API_TOKEN"]
    request = (
        f"GET {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: token {token}\r\n"
        "Accept: text/plain\r\n\r\n"
    ).encode()
    held: list[socket.socket] = []
    statuses: dict[str, int] = {}
    for _ in range(count):
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.settimeout(60)
        conn.connect(socket_path)
        conn.sendall(request)
        head = conn.recv(65536).split(b"\r\n", 1)[0].decode(errors="replace")
        code = head.split(" ")[1] if head.startswith("HTTP/") else "none"
        statuses[code] = statuses.get(code, 0) + 1
        if code == "200":
            held.append(conn)
        else:
            conn.close()
    print(json.dumps({"opened": statuses}), flush=True)
    while not os.path.exists(stop):
        time.sleep(0.2)
    for conn in held:
        conn.close()
    return {"held": len(held)}


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "watch":
        result = watch(sys.argv[2], int(sys.argv[3]))
    elif mode == "listen":
        result = listen(sys.argv[2])
    elif mode == "flood":
        result = flood(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
    else:
        result = rootfs(int(sys.argv[2]))
    print(json.dumps(result))
