"""The Jupyter server extension: cluster sessions over REST under ``{base_url}cluster/api/``.

Enabled by ``jupyter-config/jupyter_server_config.d/jupyter_cluster.json``
(``ServerApp.jpserver_extensions``). :class:`ClusterApp` holds the server's one
engine (:func:`~jupyter_cluster.config.make_engine`: a local
:class:`~jupyter_cluster.engine.manager.ClusterManager`, its child so
``c.ClusterManager.*`` applies: agents, ``max_size``, ``data_root``,
``default_image``…; or the shared service's client in team mode), and the launch
settings (``c.ClusterApp.max_cpu`` and the other
:class:`~jupyter_cluster.config.LaunchSettings`), which the engine's launch gate
applies or, in team mode, leaves to the service. Both are read from
``jupyter_server_config`` and ``jupyter_cluster_config`` files. At server start
it reconciles the store with Docker; at stop it ends the launches it drives and
leaves running sessions running (their kernels are shut down with the server).
"""

from __future__ import annotations

import os
from functools import partial
from typing import Any

from jupyter_server.extension.application import ExtensionApp
from jupyter_server.log import log_request
from traitlets import Bool, Float, Int, List, Unicode

from .. import __version__, private_dirs
from ..config import LaunchSettings, make_engine
from ..engine.api import Engine, LaunchGate
from ..errors import ClusterError, UnsafeSetting
from ..paths import cluster_dir
from ..provisioning import kernelspec
from ..setting_bounds import bounded, waits
from .drive_kernels import route_drive_paths
from .handlers import default_handlers
from .handlers.proxy import proxy_handlers
from .kernel_refusals import explain_refusals
from .kernelspec_debugger import offer_debugger
from .service import SERVICE_SETTING, ClusterService
from .terminal_names import keep_cluster_names


class ClusterApp(ExtensionApp, LaunchSettings):
    """Server extension of jupyter-cluster: REST API, events, terminals, kernels."""

    name = "jupyter_cluster"
    version = __version__
    description = "Cluster compute sessions for Jupyter (REST API under cluster/api/)"
    load_other_extensions = True

    admin_users = List(
        Unicode(),
        config=True,
        help="Users who see and act on every session of this server. Others see only "
        "their own when the server has several users (JupyterHub admins always see all); "
        "a single-user server's clients are all its owner.",
    )
    admin_groups = List(
        Unicode(),
        config=True,
        help="JupyterHub groups whose members see and act on every session (shared "
        "service, like admin_users).",
    )
    audit_max_age_days = Float(
        365.0,
        config=True,
        help="Days the audit log (launches, terminations, terminals, key access, folder "
        "changes; GET cluster/api/audit, jupyter cluster audit) keeps a record; older "
        "ones are forgotten as new ones are written. 0 keeps them all.",
    )
    kernels_here = Bool(
        True,
        config=True,
        help="Start the kernels that launches ask for (start_kernel) in this server. "
        "False in the shared service (jupyter cluster serve): each user's own server "
        "starts its kernels there.",
    )
    record_request_metrics = Bool(
        True,
        config=True,
        help="Record each request's duration in the server's /metrics "
        "(http_request_duration_seconds). False in the shared service, whose /metrics "
        "any Hub user may read: it would show other users' requests. (jupyter_server's "
        "own ServerApp.record_http_request_metrics cannot be set from config.)",
    )
    kernel_name = Unicode(
        "jupyter-cluster-session",
        config=True,
        help="Name of the kernelspec this extension provides for session kernels "
        "(start_kernel); started from a launcher it launches a session with the defaults.",
    )
    kernel_display_name = Unicode(
        "",
        config=True,
        help="Display name of that kernelspec; empty names what clicking it launches, "
        "e.g. 'Cluster: 1 x 1 CPU, 1g (launch form defaults)', so nobody takes its "
        "launcher tile for the launch dialog.",
    )
    idle_timeout = Float(
        0.0,
        config=True,
        help="Seconds a session whose kernel runs in this server may stay idle (kernel "
        "idle, no terminal into it open, no exec running in it from any process) before "
        "it is terminated, counted from the last of those; its REST model shows the "
        "deadline (idle_deadline). 0 (the default) never terminates.",
    )
    idle_check_interval = Float(
        30.0, config=True, help="Seconds between checks for idle sessions (idle_timeout)."
    )
    stats_interval = Float(
        2.0,
        config=True,
        help="Seconds between samples of GET sessions/{id}/stats?follow=1 (the sidebar's "
        "graphs); each sample takes about a second of Docker's own.",
    )
    max_streams_per_user = Int(
        12,
        config=True,
        help="Live streams (followed logs, stats) one user may hold open at once; more "
        "are refused with HTTP 429 (each holds a Docker connection that launches need "
        "too). 0: no limit.",
    )
    max_streams = Int(
        48,
        config=True,
        help="Live streams this server serves at once, all users together (keep it "
        "below the agents' connection pools, 64). 0: no limit.",
    )
    events_poll_interval = Float(
        0.5, config=True, help="Seconds between reads of the session store for events."
    )
    reconcile_interval = Float(
        10.0,
        config=True,
        help="Seconds between reconciliations with Docker while the server runs (dead "
        "containers show as RUNNING_DEGRADED); 0 disables.",
    )

    _app_waits = waits("events_poll_interval", "idle_check_interval", "stats_interval")
    _app_limits = bounded(0, "idle_timeout", "reconcile_interval", unit="seconds")
    _app_ages = bounded(0, "audit_max_age_days", unit="days")
    _app_counts = bounded(0, "max_streams", "max_streams_per_user")

    service: ClusterService
    engine: Engine[Any]
    gate: LaunchGate

    def _config_file_name_default(self) -> str:
        return "jupyter_cluster_config"

    # -- kernelspec --------------------------------------------------------------

    def _install_kernelspec(self) -> None:
        """Write the session kernelspec into a private dir on the server's search path."""
        ksm = getattr(self.serverapp, "kernel_spec_manager", None)
        if ksm is None or not hasattr(ksm, "kernel_dirs"):
            self.log.warning("jupyter-cluster: no kernel_dirs to add the session kernelspec to")
            return
        root = os.path.join(cluster_dir(), "server-kernels")
        spec_dir = os.path.join(root, self.kernel_name)
        os.makedirs(spec_dir, exist_ok=True)
        display = self.kernel_display_name or "Cluster: the shared service's defaults"
        try:
            config: dict[str, Any] = {}
            spec = self.gate.default_spec()  # None: the service's defaults apply
            if spec is not None:
                config = kernelspec.provisioner_config(spec, True, 300.0)
                described = kernelspec.display_name(spec) + " (launch form defaults)"
                display = self.kernel_display_name or described
        except ClusterError as exc:
            self.log.warning("session kernelspec without launch defaults: %s", exc)
            config = {}
        kernelspec.write_spec_dir(spec_dir, display, config)
        if root not in ksm.kernel_dirs:
            ksm.kernel_dirs.append(root)

    # -- what the service needs from its host (ServiceHost) -----------------------

    @property
    def kernel_manager(self) -> Any:
        """The server's kernel manager (session kernels are started with it)."""
        return self.serverapp.kernel_manager  # type: ignore[union-attr]

    @property
    def terminal_manager(self) -> Any:
        """The server's terminal manager, or None when terminals are disabled."""
        return self.serverapp.web_app.settings.get("terminal_manager")  # type: ignore[union-attr]

    @property
    def mount_notebook_dir(self) -> bool:
        """``c.ClusterProvisioner.mount_notebook_dir``: a kernel started by a REST launch
        (the Lab's launch dialog) follows it as a notebook's kernel does."""
        assert self.serverapp is not None
        return bool(self.serverapp.config.ClusterProvisioner.get("mount_notebook_dir", True))

    # -- ExtensionApp hooks --------------------------------------------------------

    def initialize_settings(self) -> None:
        """Make the engine and the service; handlers find the service in the settings."""
        try:
            self.engine = make_engine(self)
        except UnsafeSetting as exc:  # the server must not run at all with it
            raise SystemExit(f"jupyter-cluster: {exc}") from None
        self.gate = self.engine.launch_gate(self)
        idle_for = getattr(self.gate, "idle_timeout", None)
        if (
            self.resource_policies
            and idle_for is not None
            and getattr(self.engine, "utilization_idle_timeout_for", False) is None
        ):  # the policies' idle_timeout, for the engine's idle clean-up
            self.engine.utilization_idle_timeout_for = idle_for  # type: ignore[attr-defined]
        # This server outlives its kernels: a local engine removes their sessions
        # after shutdown_kernel returns (the service waits for that when it stops).
        assert self.serverapp is not None
        provisioner = self.serverapp.config.ClusterProvisioner
        if "end_session_in_background" not in provisioner:
            provisioner.end_session_in_background = True
        if not self.record_request_metrics:
            # Merged into the web app's settings after this returns.
            self.settings["log_function"] = partial(log_request, record_prometheus_metrics=False)
        self._install_kernelspec()
        # Cluster kernelspecs written before they said so offer the Lab's debugger too.
        offer_debugger(self.serverapp.kernel_spec_manager)
        # A notebook in Lab's data-folders drive: its cluster kernel starts there.
        route_drive_paths(self.serverapp.kernel_manager)
        # A cluster kernel refused at start says why (not jupyter_server's bare 500).
        explain_refusals(self.serverapp.kernel_manager)
        # No plain terminal under a cluster terminal's name (Lab reopens tabs by name).
        # The terminal service loads after this extension; a callback queued now runs
        # in the loop's first turn, before any request is read.
        self.serverapp.io_loop.add_callback(self._keep_cluster_terminal_names)
        self.service = ClusterService(self)
        self.settings[SERVICE_SETTING] = self.service

    def initialize_handlers(self) -> None:
        """Every route of :mod:`.handlers`: the REST API and the app proxy."""
        self.handlers.extend(default_handlers)
        self.handlers.extend(proxy_handlers)

    def _keep_cluster_terminal_names(self) -> None:
        keep_cluster_names(self.terminal_manager)

    async def _start_jupyter_server_extension(self, serverapp: Any) -> None:
        # What servers and kernels killed before left in the temporary directory.
        private_dirs.sweep()
        await self.service.ensure_started()

    async def stop_extension(self) -> None:
        """Server stop: end the launches driven here (see ClusterService.stop)."""
        service = getattr(self, "service", None)
        if service is not None and not getattr(self, "_stopped", False):
            self._stopped = True
            await service.stop()
