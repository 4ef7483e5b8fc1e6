"""Configuration shared by every front end: config files, the manager, the launch policy.

- :class:`ClusterConfigApp` reads ``jupyter_cluster_config`` files from the Jupyter
  config path; :func:`file_config` returns what they say and :func:`make_engine`
  builds the engine from them: the one place that chooses between a local
  :class:`~jupyter_cluster.engine.manager.ClusterManager` and the shared service's
  client (the CLI, its detached driver, the notebook API, the provisioner and the
  server extension use it).
- :class:`LaunchSettings` holds what users may launch through REST and the launch
  forms (``c.ClusterApp.max_cpu`` and friends: ``ClusterApp`` inherits these
  traits). :func:`launch_settings` reads the same keys outside the server, so the
  notebook's form describes exactly what the server's dialog does. Its
  ``resource_policies`` bound each user (or Hub group) within them
  (:mod:`~jupyter_cluster.core.resource_policies`).
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from jupyter_core.application import JupyterApp
from traitlets import Dict, Float, Int, List, TraitError, Unicode, validate
from traitlets.config import Config, LoggingConfigurable

from .core.launch_options import launchable_defaults
from .core.policy import LaunchPolicy, ordered_images
from .core.profiles import Profile, parse_profiles
from .core.resource_policies import Resolved, ResourcePolicy, check_table, resolve
from .core.units import parse_size
from .errors import InvalidRequest
from .setting_bounds import bounded
from .setting_images import image_names

if TYPE_CHECKING:  # imported where used: each costs every CLI command its import time
    from .client.remote_engine import RemoteEngine
    from .engine.api import Engine
    from .engine.manager import ClusterManager
    from .engine.store.policy_overrides import PolicyOverrides


class ClusterConfigApp(JupyterApp):
    """Loads ``jupyter_cluster_config`` files; front ends build their manager from it."""

    name = "jupyter-cluster"
    description = "Cluster compute sessions for Jupyter"

    @property
    def config_file_name(self) -> str:  # type: ignore[override]
        return "jupyter_cluster_config"


def local_owner() -> str:
    """Who sessions launched by this process belong to: the JupyterHub user this
    server runs for, else the operating-system user. Every front end in one
    process records the same owner, so per-owner limits count them together."""
    return os.environ.get("JUPYTERHUB_USER") or os.environ.get("USER") or getpass.getuser()


def file_config() -> Config:
    """The ``jupyter_cluster_config`` files on the Jupyter config path (what the CLI reads)."""
    app = ClusterConfigApp()
    app.load_config_file()
    return app.config


def service_client(config: Config) -> RemoteEngine | None:
    """The shared service's client when ``config`` (or the environment, read now)
    names one (``ClusterManager.service_url``); None in single-user mode."""
    section = config.get("ClusterManager", {})
    url = section.get("service_url") or os.environ.get("JUPYTER_CLUSTER_SERVICE_URL", "")
    if not url:
        return None
    from .client.remote_engine import RemoteEngine  # HTTP and SSH: team mode only

    token = section.get("service_token") or os.environ.get("JUPYTERHUB_API_TOKEN", "")
    timeout = float(section.get("service_timeout", 30.0))
    allow_http = bool(section.get("service_allow_http", False))
    return RemoteEngine(url, token, timeout=timeout, allow_http=allow_http)


def make_engine(parent: Any = None, config: Config | None = None) -> Engine[Any]:
    """The engine a front end uses: the shared service's client when one is
    configured (see :func:`service_client`), else a local :class:`ClusterManager`.

    This is the one place that chooses; front ends see the
    :class:`~jupyter_cluster.engine.api.Engine` protocol only. ``parent`` gives the
    configuration (default: the ``jupyter_cluster_config`` files on the Jupyter
    config path, as the CLI reads them); ``config`` overrides it.
    """
    if parent is None:
        parent = ClusterConfigApp()
        parent.initialize([])
    merged = Config(parent.config)
    merged.merge(config or Config())
    remote = service_client(merged)
    if remote is not None:
        return remote
    from .engine.manager import ClusterManager

    return ClusterManager(parent=parent, config=config) if config else ClusterManager(parent=parent)


class LaunchSettings(LoggingConfigurable):
    """What users may launch through the REST API and the launch forms.

    Configured as ``c.ClusterApp.<name>`` (the server extension inherits these
    traits); :func:`launch_settings` reads the same section elsewhere.
    """

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

    launch_profiles = Dict(
        config=True,
        help="Named launch profiles users start a launch from: {'name': {'description': "
        "'...', 'groups': ['hub-group', ...], 'fields': {'size': 2, 'cpu': 0.5, ...}}}. "
        "'fields' are launch fields (see GET launch-options), under a launch's own; "
        "'groups' (optional) shows the profile only to those JupyterHub groups. A profile "
        "a user's limits cannot launch is listed disabled with the reason.",
    )

    resource_policies = Dict(
        config=True,
        help="Limits per user and per JupyterHub group: {'default': {...}, 'users': "
        "{'alice': {...}}, 'groups': {'gpu-team': {...}}}. Keys: sessions, cpu, mem, gpu "
        "(held at once in all sessions; 0: no limit), max_size, max_cpu, max_mem, max_shm, "
        "max_gpu (per session's container), max_lifetime, idle_timeout (e.g. '8h'), "
        "resource_groups, images (lists; empty: all; an image ending in '/' is a prefix), "
        "priority, max_priority. Unset keys come from 'default', whose unset keys come "
        "from max_cpu, max_mem, max_shm, max_gpu, max_sessions_per_user, resource_groups, "
        "allowed_images and ClusterManager.max_*_per_owner, max_size, "
        "max_session_lifetime. A user's own entry wins; else the most generous of their "
        "groups' entries (per key: no limit if any has none, else the largest); else the "
        "default. Admins change entries at run time (REST limits/, jupyter cluster limits).",
    )

    _engine: ClusterManager
    _defaults: dict[str, Any]
    _profiles: dict[str, Profile] | None = None
    _overrides: PolicyOverrides | None = None

    _launch_cpus = bounded(0, "max_cpu", above=True, unit="CPUs")
    _launch_counts = bounded(0, "max_gpu", "max_sessions_per_user")
    _launch_images = image_names("allowed_images")

    @validate("resource_policies")
    def _check_policies(self, proposal: Any) -> dict[str, Any]:
        try:
            check_table(proposal["value"])
        except InvalidRequest as exc:
            raise TraitError(f"ClusterApp.resource_policies: {exc}") from None
        return dict(proposal["value"])

    @validate("max_mem", "max_shm")
    def _check_size(self, proposal: Any) -> str:
        try:
            parse_size(proposal["value"], proposal["trait"].name)
        except InvalidRequest as exc:
            raise TraitError(str(exc)) from None
        return str(proposal["value"])

    def bind(self, engine: ClusterManager) -> None:
        """Describe launches on the local ``engine`` (its gate calls this); checks the
        configured defaults against it (a default that can't launch is logged and
        left out)."""
        self._engine = engine
        self._defaults = {}
        tx = getattr(getattr(engine, "store", None), "tx", None)
        if tx is not None:  # the engine's store keeps admins' run-time changes
            from .engine.store.policy_overrides import PolicyOverrides

            self._overrides = PolicyOverrides(tx)
        kept, problems = launchable_defaults(self.default_launch_options, self.policy)
        for problem in problems:
            self.log.error("ClusterApp.default_launch_options: %s", problem)
        self._defaults = kept

    def profiles(self) -> dict[str, Profile]:
        """The site's launch profiles (``launch_profiles``); a wrong one is logged
        once and left out."""
        if self._profiles is None:
            self._profiles, problems = parse_profiles(self.launch_profiles)
            for problem in problems:
                self.log.error("ClusterApp.launch_profiles: %s", problem)
        return self._profiles

    def default_policy(self) -> ResourcePolicy:
        """Everyone's resource policy unless an entry says otherwise: the global
        settings, with ``resource_policies['default']`` over them."""
        engine = self._engine
        totals = engine.quota(self.max_sessions_per_user)
        base = ResourcePolicy(
            sessions=totals.sessions,
            cpu=totals.cpu,
            mem=totals.mem,
            gpu=totals.gpu,
            max_size=engine.max_size,
            max_cpu=self.max_cpu,
            max_mem=parse_size(self.max_mem),
            max_shm=parse_size(self.max_shm),
            max_gpu=self.max_gpu,
            max_lifetime=engine.max_session_lifetime,
            resource_groups=tuple(self.resource_groups),
            images=(),
        )
        return base.updated(self.resource_policies.get("default") or {}, "default: ")

    def policy_entries(self) -> dict[str, dict[str, dict[str, Any]]]:
        """The ``users`` and ``groups`` entries that apply: the configured ones with
        admins' run-time overrides over them (key by key)."""
        table = self.resource_policies
        changed = self._overrides.all() if self._overrides is not None else {}
        entries: dict[str, dict[str, dict[str, Any]]] = {}
        for kind in ("users", "groups"):
            merged = {name: dict(keys) for name, keys in (table.get(kind) or {}).items()}
            for name, keys in changed.get(kind, {}).items():
                merged[name] = {**merged.get(name, {}), **keys}
            entries[kind] = merged
        return entries

    def policy_overrides(self) -> PolicyOverrides | None:
        """Admins' run-time changes, in the bound engine's store (None before
        :meth:`bind`)."""
        return self._overrides

    def resource_policy(self, owner: str | None = None, groups: Sequence[str] = ()) -> Resolved:
        """The resource policy of ``owner`` (default: this process's user) with Hub
        ``groups``, and where it comes from (the rule: :func:`~.core.resource_policies.
        resolve`)."""
        entries = self.policy_entries()
        return resolve(
            owner or local_owner(),
            groups,
            self.default_policy(),
            entries["users"],
            entries["groups"],
        )

    def policy(
        self,
        defaults: dict[str, Any] | None = None,
        owner: str | None = None,
        groups: Sequence[str] = (),
    ) -> LaunchPolicy:
        """What ``owner`` (default: this process's user, with Hub ``groups``) may
        launch now: their resource policy's maxima, groups and images, their data
        folders."""
        engine = self._engine
        limits = self.resource_policy(owner, groups).policy
        agent_groups = sorted({a.config.resource_group for a in engine.pool.agents.values()})
        site_groups = limits.resource_groups or tuple(agent_groups)
        site_images = ordered_images(self.allowed_images, engine.default_image)
        return LaunchPolicy(
            images=tuple(i for i in site_images if limits.allows_image(i)),
            max_size=limits.max_size,
            max_cpu=limits.max_cpu,
            max_mem=limits.max_mem,
            max_shm=limits.max_shm,
            max_gpu=limits.max_gpu,
            resource_groups=tuple(site_groups),
            folders=tuple(engine.folders_for(owner or local_owner()).names()),
            max_sessions_per_user=limits.sessions,
            env_allowed=tuple(engine.allowed_env_names),
            defaults=self._defaults if defaults is None else defaults,
        )


def launch_settings(config: Config, log: Any = None) -> LaunchSettings:
    """The server's launch settings as read outside it (the notebook's launch form,
    kernels started by the provisioner): the launch-setting keys of ``config``'s
    ``ClusterApp`` section, so the form and the server agree. A local engine's
    gate binds them to itself (:meth:`LaunchSettings.bind`)."""
    names = set(LaunchSettings.class_trait_names(config=True))
    merged = Config({"LaunchSettings": config.get("LaunchSettings", {})})
    section = config.get("ClusterApp", {})
    merged.LaunchSettings.merge({k: v for k, v in section.items() if k in names})
    return LaunchSettings(config=merged, **({"log": log} if log is not None else {}))
