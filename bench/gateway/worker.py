"""gateway_provisioners' side of ``bench_gateway.py``, run in gateway_provisioners' own Python.

``bench_gateway.py`` starts this script with the interpreter of the environment where
``gateway_provisioners[docker]`` is installed (never the project's: it is not one of
the project's dependencies, so this script imports nothing from ``bench/``; see
:class:`gateway.peer.GatewayWorker`) and sends it one JSON command a line on stdin; each
answer is one JSON line on stdout (logs go to stderr). It holds at most one kernel:

- ``{"cmd": "start", "kernel": NAME, "timeout": S}``: ``AsyncKernelManager(kernel_name=
  NAME).start_kernel()`` (the kernelspec's ``DockerProvisioner`` runs the launcher,
  which ``docker run``\\ s the image, and waits for the kernel's connection info), then
  a client's ``wait_for_ready()`` (a ``kernel_info`` reply). Answers ``seconds`` from the
  start_kernel call to the reply, and ``connection`` (the kernel's connection info,
  so the benchmark's own client can time cells against it).
- ``{"cmd": "shutdown"}``: ``shutdown_kernel()`` timed until it returns (``seconds``),
  and until no container labelled with the kernel's id exists any more (``gone``,
  polled every 20 ms from the same start: the launcher runs containers with
  ``remove=True``, so Docker may still be removing it when shutdown_kernel returns).
- ``{"cmd": "quit"}``: shut down what is left and exit.

Errors answer ``{"error": TEXT}``. The event loop keeps running between commands
(stdin is read in a thread), as a server's would.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
import traceback
from typing import Any

import docker
from jupyter_client.manager import AsyncKernelManager


class Worker:
    """The one kernel of this process and the commands on it."""

    def __init__(self) -> None:
        self.km: Any = None
        self.client: Any = None
        self.docker = docker.from_env()

    async def start(self, kernel: str, timeout: float) -> dict[str, Any]:
        """Start a kernel of ``kernel``; seconds until it answered kernel_info."""
        self.km = AsyncKernelManager(kernel_name=kernel)
        begin = time.monotonic()
        await self.km.start_kernel()
        self.client = self.km.client()
        self.client.start_channels()
        await self.client.wait_for_ready(timeout=timeout)
        seconds = time.monotonic() - begin
        info = {k: v for k, v in self.km.get_connection_info().items() if k != "key"}
        info["key"] = self.km.session.key.decode()
        return {"seconds": seconds, "connection": info}

    def _container_exists(self, kernel_id: str) -> bool:
        found = self.docker.containers.list(all=True, filters={"label": f"kernel_id={kernel_id}"})
        return bool(found)

    async def shutdown(self) -> dict[str, Any]:
        """Shut the kernel down; seconds until shutdown_kernel returned and until gone."""
        if self.km is None:
            raise RuntimeError("no kernel")
        kernel_id = self.km.kernel_id
        self.client.stop_channels()
        begin = time.monotonic()
        await self.km.shutdown_kernel()
        seconds = time.monotonic() - begin
        while await asyncio.to_thread(self._container_exists, kernel_id):
            if time.monotonic() - begin > 60:
                raise RuntimeError(f"the container of kernel {kernel_id} is still there after 60 s")
            await asyncio.sleep(0.02)
        gone = time.monotonic() - begin
        self.km = self.client = None
        return {"seconds": seconds, "gone": gone}

    async def quit(self) -> None:
        """Shut down a kernel still running (untimed)."""
        if self.client is not None:
            self.client.stop_channels()
        if self.km is not None:
            if self.km.has_kernel:
                await self.km.shutdown_kernel(now=True)
            self.km = self.client = None


async def main() -> int:
    """Answer commands until ``quit`` or the end of stdin."""
    worker = Worker()
    while True:
        line = await asyncio.to_thread(sys.stdin.readline)
        if not line:
            await worker.quit()
            return 0
        command = json.loads(line)
        try:
            if command["cmd"] == "start":
                answer = await worker.start(command["kernel"], float(command["timeout"]))
            elif command["cmd"] == "shutdown":
                answer = await worker.shutdown()
            elif command["cmd"] == "quit":
                await worker.quit()
                print(json.dumps({"ok": True}), flush=True)
                return 0
            else:
                answer = {"error": f"unknown command {command['cmd']!r}"}
        except Exception as exc:  # reported to the benchmark, which fails the run
            traceback.print_exc()
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
