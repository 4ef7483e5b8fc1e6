"""The Jupyter server extension: cluster sessions over REST under ``{base_url}cluster/api/``.

Enabled by ``jupyter-config/jupyter_server_config.d/jupyter_cluster.json``
(``ServerApp.jpserver_extensions``). :class:`ClusterApp` holds the server's one
:class:`~jupyter_cluster.engine.manager.ClusterManager` (its parent, so
``c.ClusterManager.*`` applies: agents, ``max_size``, ``data_root``,
``default_image``…) and the REST policy below. Both are read from
``jupyter_server_config`` and ``jupyter_cluster_config`` files. At server start
it reconciles the store with Docker; at stop it ends the launches it drives and
leaves running sessions running (their kernels are shut down with the server).
"""

from __future__ import annotations

import json
import os
from typing import Any

from jupyter_server.extension.application import ExtensionApp
from traitlets import Dict, Float, Int, List, TraitError, Unicode, validate

from .. import __version__
from ..core.launch_options import FIELDS, LaunchPolicy, same_image
from ..core.launch_options import validate as validate_launch
from ..core.units import parse_size
from ..engine.manager import ClusterManager
from ..errors import ClusterError, InvalidRequest
from ..paths import cluster_dir
from ..provisioning import kernelspec
from .service import ClusterService


class ClusterApp(ExtensionApp):
    """Server extension of jupyter-cluster: REST API, events, terminals, kernels."""

    name = "jupyter_cluster"
    version = __version__
    description = "Cluster compute sessions for Jupyter (REST API under cluster/api/)"
    load_other_extensions = True

    allowed_images = List(
        Unicode(),
        config=True,
        help="Images users may launch through the REST API and the launch forms; empty "
        "means only ClusterManager.default_image.",
    )
    resource_groups = List(
        Unicode(),
        config=True,
        help="Resource groups users may launch in; empty means every group that has an "
        "agent (agents name their group in ClusterManager.agents).",
    )
    max_cpu = Float(8.0, config=True, help="Most CPUs per container a user may ask for.")
    max_mem = Unicode("16g", config=True, help="Most memory per container, e.g. 16g.")
    max_shm = Unicode("4g", config=True, help="Most shared memory per container, e.g. 1g.")
    max_gpu = Int(8, config=True, help="Most GPUs per container a user may ask for.")
    max_sessions_per_user = Int(
        8,
        config=True,
        help="Most sessions one user may have pending or running at once (0: no limit).",
    )
    default_launch_options = Dict(
        config=True,
        help="Defaults of the launch form and of POST sessions, e.g. {'cpu': 0.5, "
        "'mem': '512m', 'size': 2}; keys are the launch fields (see GET launch-options).",
    )
    kernel_name = Unicode(
        "jupyter-cluster-session",
        config=True,
        help="Name of the kernelspec this extension provides for session kernels "
        "(start_kernel); started from a launcher it launches a session with the defaults.",
    )
    kernel_display_name = Unicode(
        "Python 3 (cluster session)", config=True, help="Display name of that kernelspec."
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

    manager: ClusterManager
    service: ClusterService

    def _config_file_name_default(self) -> str:
        return "jupyter_cluster_config"

    @validate("max_mem", "max_shm")
    def _check_size(self, proposal: Any) -> str:
        try:
            parse_size(proposal["value"], proposal["trait"].name)
        except InvalidRequest as exc:
            raise TraitError(str(exc)) from None
        return str(proposal["value"])

    # -- policy ------------------------------------------------------------------

    def _images(self) -> list[str]:
        default = self.manager.default_image
        images = list(self.allowed_images) or [default]
        first = [i for i in images if same_image(i, default)]
        return first + [i for i in images if not same_image(i, default)]

    def policy(self, defaults: dict[str, Any] | None = None) -> LaunchPolicy:
        """What users may launch, with the current data folders and groups."""
        groups = sorted({a.config.resource_group for a in self.manager.agent_map.values()})
        return LaunchPolicy(
            images=tuple(self._images()),
            max_size=self.manager.max_size,
            max_cpu=self.max_cpu,
            max_mem=parse_size(self.max_mem),
            max_shm=parse_size(self.max_shm),
            max_gpu=self.max_gpu,
            resource_groups=tuple(self.resource_groups or groups),
            folders=tuple(f.name for f in self.manager.folders.list()),
            max_sessions_per_user=self.max_sessions_per_user,
            defaults=self._defaults if defaults is None else defaults,
        )

    def _checked_defaults(self) -> dict[str, Any]:
        """default_launch_options without the keys that are unknown or invalid (logged)."""
        kept: dict[str, Any] = {}
        for key, value in self.default_launch_options.items():
            if key in FIELDS and key != "name":
                kept[key] = value
            else:
                self.log.error("ClusterApp.default_launch_options: %r is not a launch field", key)
        while True:
            try:
                validate_launch({}, self.policy(kept))
                return kept
            except InvalidRequest as exc:
                if exc.field not in kept:
                    self.log.error("the launch form's default is not launchable: %s", exc)
                    return kept
                self.log.error("ClusterApp.default_launch_options ignored: %s", exc)
                del kept[exc.field]

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
        try:
            fields, _ = validate_launch({}, self.policy())
            config = kernelspec.provisioner_config(self.manager.make_spec(**fields), True, 300.0)
        except ClusterError as exc:
            self.log.warning("session kernelspec without launch defaults: %s", exc)
            config = {}
        with open(os.path.join(spec_dir, "kernel.json"), "w") as f:
            json.dump(kernelspec.kernel_json(self.kernel_display_name, config), f, indent=1)
        if root not in ksm.kernel_dirs:
            ksm.kernel_dirs.append(root)

    # -- ExtensionApp hooks --------------------------------------------------------

    def use_manager(self, manager: ClusterManager) -> None:
        """Serve ``manager`` and check the configured launch defaults against it.

        The server calls this at start; the notebook form (:func:`jupyter_cluster.session.
        launch_schema`) calls it too, so both describe the same launch form.
        """
        self.manager = manager
        self._defaults: dict[str, Any] = {}
        self._defaults = self._checked_defaults()

    def initialize_settings(self) -> None:
        self.use_manager(ClusterManager(parent=self, log=self.log))
        self._install_kernelspec()
        self.service = ClusterService(self)

    def initialize_handlers(self) -> None:
        from .handlers.base import default_handlers

        self.handlers.extend(default_handlers)

    async def _start_jupyter_server_extension(self, serverapp: Any) -> None:
        await self.service.ensure_started()

    async def stop_extension(self) -> None:
        service = getattr(self, "service", None)
        if service is not None and not getattr(self, "_stopped", False):
            self._stopped = True
            await service.stop()
