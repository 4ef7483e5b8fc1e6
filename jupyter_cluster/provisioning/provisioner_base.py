"""What every part of :class:`~.provisioner.ClusterProvisioner` shares: the engine,
the route to the kernel (:class:`~.kernel_link.KernelLink`), the kernel process
handle, and the event loop they belong to.

The provisioner is built in layers, each a module: this state, ending the kernel
and its session (:mod:`.kernel_end`), and starting it (:mod:`.provisioner`).
"""

from __future__ import annotations

import asyncio
from typing import Any

from jupyter_client.provisioning import KernelProvisionerBase
from traitlets import Unicode
from traitlets.config import Config

from ..config import file_config, make_engine
from ..engine.api import Engine
from .kernel_link import KernelLink, Reached
from .left_behind import close_on_loop
from .process import KernelProcess


class ProvisionerBase(KernelProvisionerBase):
    """The engine, link and kernel handle of a cluster kernel (see the module)."""

    session_id = Unicode(
        None,
        allow_none=True,
        config=True,
        help="Start the kernel in main1 of this existing RUNNING session instead of "
        "launching one (the server's REST API passes it as the ``cluster_session_id`` "
        "argument of start_kernel); shutting the kernel down still terminates it.",
    )
    #: Set (by the server extension, when the server stops) to shut the kernel down
    #: but leave its session running.
    keep_session = False
    _engine: Engine[Any] | None = None
    _config: Config | None = None
    _process: KernelProcess | None = None
    _link_: KernelLink | None = None
    _ready_task: asyncio.Future[None] | None = None
    #: The event loop the engine, the link and the process handle belong to.
    _loop: asyncio.AbstractEventLoop | None = None
    #: Set when those were left on another loop: the kernel is to be re-attached.
    _moved = False
    #: Whether the kernel manager tells this provisioner when it gives the kernel up.
    _hears_death = False
    #: What the kernel manager asked the kernel: "end", "restart", or "" (see :meth:`poll`).
    _ending = ""
    #: Removing the containers but main1 while the kernel exits (see shutdown_requested).
    _early: asyncio.Task[None] | None = None
    #: Why the kernel ended by itself (see kernel_death), its session's end reason.
    _death = ""
    #: The process whose end :attr:`_death` tells (each end is told once).
    _death_of: KernelProcess | None = None

    @property
    def engine(self) -> Engine[Any]:
        """The engine: ``jupyter_cluster_config`` files, then the kernel manager's config."""
        if self._engine is None:
            self._engine = make_engine(self, self._engine_config())
            self._loop = asyncio.get_running_loop()
        return self._engine

    def _engine_config(self) -> Config:
        """``jupyter_cluster_config`` files, overridden by the kernel manager's config
        (read once per provisioner: the engine and the launch settings share it)."""
        if self._config is None:
            self._config = Config(file_config())
            self._config.merge(self.config)
        return self._config

    @property
    def _link(self) -> KernelLink:
        """The route to the kernel in main1 (made on first use)."""
        if self._link_ is None:
            self._link_ = KernelLink(self.parent, self.kernel_id, self.engine.main_route())
        return self._link_

    def _reached(self, reached: Reached) -> KernelProcess:
        """Keep the handle on the kernel, and the connection info if it changed."""
        if reached.connection is not None:
            self.connection_info = reached.connection
        self._process = reached.process
        return reached.process

    async def _here(self) -> None:
        """Make sure the engine, link and process handle belong to the running loop.

        A kernel manager may drive its provisioner from more than one event loop:
        jupyter_server's synchronous ``MappingKernelManager`` starts kernels on one
        runner loop but, at server stop, shuts them down from a runner nested in it,
        while the first is blocked. Docker and SSH connections cannot cross loops, so
        what was made on another loop is left to it (closed there when it runs again)
        and made anew here; the kernel itself is re-attached by its pid file.
        """
        loop = asyncio.get_running_loop()
        if self._loop is None or self._loop is loop:
            self._loop = loop
            return
        old, self._loop = self._loop, loop
        engine, link, process, ready = self._engine, self._link_, self._process, self._ready_task
        self._engine, self._link_, self._process, self._ready_task = None, None, None, None
        self._moved = process is not None
        close_on_loop(old, engine, link, process, ready)

    async def _handle(self) -> KernelProcess | None:
        """The kernel process handle, re-attached if it was left on another loop."""
        await self._here()
        if self._moved and self.session_id is not None:
            self._moved = False
            session = await self.engine.get(self.session_id)
            self._reached(await self._link.reattach(session, self.connection_info))
        return self._process

    @property
    def has_process(self) -> bool:
        """Whether a kernel process is known (started, re-attached, or to re-attach)."""
        return self._process is not None or self._moved
