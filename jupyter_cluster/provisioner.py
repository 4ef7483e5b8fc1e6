"""ClusterProvisioner: a jupyter_client kernel provisioner whose kernel runs in main1.

Registered as ``cluster-provisioner`` under ``jupyter_client.kernel_provisioners``;
any KernelManager (JupyterLab, ``jupyter console``, nbclient…) uses it when the
kernelspec's ``metadata.kernel_provisioner`` names it. Starting the kernel
launches a fresh cluster session through :class:`ClusterManager`, then runs the
kernelspec's argv as ``work`` in ``main1`` (ports published on the agent's
address). Restart replaces only the kernel process; shutdown terminates the
session.
"""

from __future__ import annotations

import asyncio
import json
import signal
from typing import Any

from jupyter_client.connect import KernelConnectionInfo
from jupyter_client.provisioning import KernelProvisionerBase
from traitlets import Float, List, Unicode
from traitlets import Int as IntTrait

from . import naming
from .errors import ClusterError, LaunchFailed
from .kernel_process import KernelProcess
from .manager import ClusterManager
from .models import Session

_PORT_NAMES = ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port")


class ClusterProvisioner(KernelProvisionerBase):
    """Provision a kernel inside ``main1`` of a new cluster session."""

    image = Unicode("", config=True, help="Kernel image; empty uses the manager's default.")
    size = IntTrait(1, config=True, help="Cluster size: main1 plus size-1 sub containers.")
    mode = Unicode("single-node", config=True, help="single-node or multi-node.")
    cpu = Unicode("1", config=True, help="CPUs per container, e.g. 0.5.")
    mem = Unicode("1g", config=True, help="Memory per container, e.g. 512m or 2g.")
    shm = Unicode("64m", config=True, help="Shared memory per container.")
    gpu = IntTrait(0, config=True, help="GPUs per container.")
    mounts = List(Unicode(), config=True, help="Data folders to mount (NAME or NAME:ro).")
    resource_group = Unicode("default", config=True, help="Resource group to schedule in.")
    bootstrap = Unicode("", config=True, help="Shell command run in every container at start.")
    launch_timeout = Float(
        300.0,
        config=True,
        help="Seconds the kernel may take to answer, pending time included; then the "
        "start fails and the session is cancelled or removed.",
    )

    session_id: str | None = None
    _manager: ClusterManager | None = None
    _process: KernelProcess | None = None

    # -- helpers -------------------------------------------------------------------

    @property
    def manager(self) -> ClusterManager:
        """The engine, configured from the same config as the kernel manager."""
        if self._manager is None:
            self._manager = ClusterManager(parent=self)
        return self._manager

    def _launch_fields(self) -> dict[str, Any]:
        fields: dict[str, Any] = {
            "size": self.size,
            "mode": self.mode,
            "cpu": self.cpu,
            "mem": self.mem,
            "shm": self.shm,
            "gpu": self.gpu,
            "mounts": list(self.mounts),
            "resource_group": self.resource_group,
            "bootstrap": self.bootstrap or None,
        }
        if self.image:
            fields["image"] = self.image
        return fields

    async def _launch_session(self) -> Session:
        manager = self.manager
        await manager.start()
        spec = manager.make_spec(**self._launch_fields())
        session = await manager.submit(spec, owner="kernel")
        self.session_id = session.id
        last = ""

        def report(s: Session) -> None:
            nonlocal last
            if s.status_reason and s.status_reason != last:
                last = s.status_reason
                self.log.info("cluster session %s %s: %s", s.name, s.status.value, last)

        try:
            return await asyncio.wait_for(
                manager.drive(session.id, on_change=report), self.launch_timeout
            )
        except asyncio.TimeoutError:
            current = await manager.get(session.id)
            raise LaunchFailed(
                f"the cluster session was not ready within {self.launch_timeout:g} s "
                f"(it was {current.status.value}: {current.status_reason or 'no reason given'}); "
                "it was cancelled. Raise launch_timeout or free resources"
            ) from None

    # -- KernelProvisionerBase -------------------------------------------------------

    @property
    def has_process(self) -> bool:
        return self._process is not None

    async def pre_launch(self, **kwargs: Any) -> dict[str, Any]:
        """Launch (or, on restart, reuse) the session and prepare the kernel command."""
        km = self.parent
        assert km is not None, "ClusterProvisioner runs under a KernelManager"
        if self.session_id is None:
            session = await self._launch_session()
        else:
            session = await self.manager.get(self.session_id)
            if session.status.value not in ("RUNNING", "RUNNING_DEGRADED"):
                raise ClusterError(f"cluster session {session.name} is {session.status.value}")
        main = session.containers[0]
        agent = self.manager.agent(main.agent or "")
        state = await agent.inspect_container(main.container_id or "")
        if state is None:
            raise ClusterError(f"main1 of cluster session {session.name} is gone")
        address = agent.config.address
        km.ip = "127.0.0.1" if address in ("0.0.0.0", "") else address
        km.transport = "tcp"
        for name, port in zip(_PORT_NAMES, naming.KERNEL_PORTS, strict=True):
            setattr(km, name, state.ports[port][1])
        km.write_connection_file()
        self.connection_info = km.get_connection_info()
        self._process = KernelProcess(agent, main.container_id or "", self.kernel_id)
        # Not km.format_kernel_cmd: it would swap "python3" for the server's interpreter.
        inner = self._process.connection_file
        cmd = [part.replace("{connection_file}", inner) for part in self.kernel_spec.argv]
        cmd += kwargs.pop("extra_arguments", [])
        kwargs.pop("env", None)
        return {**kwargs, "cmd": cmd, "env": dict(self.kernel_spec.env or {})}

    def _inner_connection(self) -> bytes:
        info = dict(self.connection_info)
        info["ip"] = "0.0.0.0"
        for name, port in zip(_PORT_NAMES, naming.KERNEL_PORTS, strict=True):
            info[name] = port
        info["key"] = info["key"].decode() if isinstance(info["key"], bytes) else info["key"]
        info.pop("kernel_name", None)
        return json.dumps(info).encode()

    async def launch_kernel(self, cmd: list[str], **kwargs: Any) -> KernelConnectionInfo:
        """Run the kernel as ``work`` in main1 and hand back host-side connection info."""
        assert self._process is not None
        await self._process.start(cmd, self._inner_connection(), env=kwargs.get("env") or {})
        return self.connection_info

    async def poll(self) -> int | None:
        return None if self._process is None else await self._process.poll()

    async def wait(self) -> int | None:
        if self._process is None:
            return 0
        return await self._process.wait()

    async def send_signal(self, signum: int) -> None:
        if self._process is not None:
            await self._process.signal(signum)

    async def kill(self, restart: bool = False) -> None:
        await self.send_signal(signal.SIGKILL)

    async def terminate(self, restart: bool = False) -> None:
        await self.send_signal(signal.SIGTERM)

    async def cleanup(self, restart: bool = False) -> None:
        """Forget the kernel process; unless restarting, terminate the whole session."""
        if self._process is not None:
            await self._process.close()
            self._process = None
        if restart or self.session_id is None:
            return
        try:
            await self.manager.terminate(self.session_id)
        finally:
            self.session_id = None
            await self.manager.close()
            self._manager = None

    def get_shutdown_wait_time(self, recommended: float = 5.0) -> float:
        return recommended

    def get_stable_start_time(self, recommended: float = 10.0) -> float:
        return max(recommended, 20.0)

    async def get_provisioner_info(self) -> dict[str, Any]:
        """What a server needs to re-attach to this kernel after a restart."""
        info = await super().get_provisioner_info()
        info["session_id"] = self.session_id
        return info

    async def load_provisioner_info(self, provisioner_info: dict[str, Any]) -> None:
        """Re-attach to a kernel of a running session (see get_provisioner_info)."""
        await super().load_provisioner_info(provisioner_info)
        self.session_id = provisioner_info.get("session_id")
        if self.session_id:
            session = await self.manager.get(self.session_id)
            main = session.containers[0]
            agent = self.manager.agent(main.agent or "")
            self._process = KernelProcess(agent, main.container_id or "", self.kernel_id)
