"""The settings of the engine: ``c.ClusterManager.*`` (agents, limits, timeouts, queue).

:class:`ManagerSettings` holds most traits; the warm pool's (:mod:`.warm_settings`),
idle sessions' (:mod:`.utilization_settings`) and the queue order's
(:mod:`.queue_settings`) are mixins of their own. :class:`EngineSettings` is all of
them: :class:`~jupyter_cluster.engine.manager.ClusterManager` inherits it, so they are
configured as ``c.ClusterManager.<name>`` in the usual Jupyter config files, and the
CLI's quick path (:mod:`jupyter_cluster.cli.quick`) reads the same section through it
without starting the engine. Container confinement has its own section,
``c.ContainerHardening`` (:mod:`.hardening`).
"""

from __future__ import annotations

from typing import Any

from traitlets import Any as AnyTrait
from traitlets import Bool, Dict, Enum, Float, Int, List, TraitError, Unicode, default, validate
from traitlets.config import LoggingConfigurable

from ..core import naming
from ..core.images import validate_credentials
from ..paths import default_data_root, default_db_path
from ..setting_bounds import bounded, waits
from ..setting_images import image_names
from .queue_settings import QueueSettings
from .utilization_settings import UtilizationIdleSettings
from .warm_settings import WarmPoolSettings


class ManagerSettings(LoggingConfigurable):
    """The configurable traits of :class:`ClusterManager` (see the module docstring)."""

    agents = List(
        Dict(),
        config=True,
        help="""The Docker hosts sessions run on, one dict each: id, url (empty for
        the local engine, unix:///path, or tcp://HOST:2376 with tls), tls ({'ca': PATH,
        'cert': PATH, 'key': PATH}: Docker's client certificate; required for tcp://
        unless insecure: True), resource_group (default 'default'), address (where
        main1's ports are published, default 127.0.0.1), kernel_transport ('ssh', the
        default: kernel traffic forwarded through main1's SSH port to sockets only
        this user can reach; 'direct': its published ports, which every local user
        can read IOPub from), cpu and mem (capacity;
        default: what the engine reports), gpus (a list of device ids: when given, used
        instead of detecting them), detect_gpus ('auto', True or False: overrides
        GpuDetection.detect for this agent), data_root (the
        shared data-folder root as that host sees it), timeout and connect_timeout
        (seconds; default docker_timeout and docker_connect_timeout). Empty means one
        agent: the local Docker engine in group 'default'.""",
    )
    kernel_transport = Enum(
        ["", "ssh", "direct"],
        "",
        config=True,
        help="""How every agent's kernels are reached, whatever its own
        kernel_transport says: '' (each agent's own setting), 'ssh' or 'direct'. The
        shared service (jupyter cluster serve) sets 'ssh': users' servers reach their
        kernels over SSH anyway, so main1 publishes no kernel port that every user of
        the host could connect to.""",
    )
    docker_timeout = Float(
        30.0,
        config=True,
        help="Seconds a Docker call may wait for the engine's answer before the agent "
        "is marked unavailable (streams such as followed logs are not limited).",
    )
    docker_connect_timeout = Float(
        5.0, config=True, help="Seconds to connect to an agent's Docker engine."
    )
    overlay_encryption = Bool(
        False,
        config=True,
        help="Encrypt the overlay network of sessions that span agents (Docker's IPsec "
        "'encrypted' option; costs CPU on every packet and needs the ESP protocol "
        "allowed between the agents).",
    )
    pending_timeout = Float(
        0.0,
        config=True,
        help="Seconds a session may wait PENDING for room before it is cancelled with "
        "that reason; 0 waits until cancelled.",
    )
    history_max_age_days = Float(
        90.0,
        config=True,
        help="Days an ended session stays in the history (ls --all); 0 keeps them all.",
    )
    history_max_count = Int(
        10000, config=True, help="Most ended sessions kept in the history; 0: no limit."
    )
    max_session_lifetime = Float(
        0.0,
        config=True,
        help="Seconds any session (batch or interactive) may live, counted from its "
        "launch; at the limit it is terminated with a reason that says so, after a "
        "warning (a status reason) in its last 60 s. A session's own max_lifetime "
        "(--max-lifetime) may only be shorter. 0: no limit.",
    )
    job_poll_interval = Float(
        1.0,
        config=True,
        help="Seconds between two looks at a batch job (has its command exited?) and at "
        "sessions' lifetimes, by whichever process watches them.",
    )
    pending_backfill = Bool(
        False,
        config=True,
        help="Let a waiting session start before earlier waiting sessions of its "
        "resource group when it fits and they do not (default: first in, first out).",
    )
    max_size = Int(16, config=True, help="Largest cluster size a user may ask for.")
    max_sessions_per_owner = Int(
        0,
        config=True,
        help="Most sessions one owner may have waiting or running at once, from every "
        "front end together (0: no limit).",
    )
    max_cpu_per_owner = Float(
        0.0,
        config=True,
        help="Most CPUs one owner's active sessions may hold in all (0: no limit).",
    )
    max_mem_per_owner = Unicode(
        "",
        config=True,
        help="Most memory one owner's active sessions may hold in all, e.g. 64g (empty: no limit).",
    )
    max_gpu_per_owner = Int(
        0, config=True, help="Most GPUs one owner's active sessions may hold in all (0: no limit)."
    )
    pull_images = Bool(
        True,
        config=True,
        help="""Pull a launch's image on a placed agent that lacks it (a PULLING step of
        PREPARING) instead of leaving that agent out of placement. Agents that have
        the image are still preferred. Off: only agents that have it take the session.""",
    )
    image_pull_timeout = Float(
        600.0,
        config=True,
        help="Seconds one agent's pull of a launch's image may take before the launch fails.",
    )
    registry_credentials = Dict(
        config=True,
        help="""Credentials of private registries, by registry host as it appears in
        image names ('registry.example.com:5000'; 'docker.io' for Docker Hub):
        {'username': ..., 'password': ...}. Used by the engine for every pull on every
        agent; never sent to users and never logged.""",
    )
    allowed_registries = List(
        Unicode(),
        config=True,
        help="""When not empty, launches may only use images from these registries
        (hosts such as 'registry.example.com:5000', 'docker.io' for Docker Hub) or
        prefixes (ending in '/', e.g. 'registry.example.com/team/'); others are refused
        with a 400 naming the image field. The default image is always allowed.""",
    )
    allowed_env_names = List(
        Unicode(),
        config=True,
        help="""Names jupyter-cluster sets itself that users may still set at launch
        (--env, REST env), e.g. ['PATH'] to let users put tools of their own first
        (without it, the image's PATH is the containers'). Others
        of them (BACKENDAI_*, JC_*, JUPYTER_CLUSTER_*, PATH, HOME, ...) are refused
        with a 400 naming the env field.""",
    )

    _manager_waits = waits(
        "docker_timeout", "docker_connect_timeout", "image_pull_timeout", "job_poll_interval"
    )
    _manager_more_waits = waits("prepare_timeout", "pending_poll_interval", "service_timeout")
    _manager_limits = bounded(0, "pending_timeout", "max_session_lifetime", unit="seconds")
    _manager_ages = bounded(0, "history_max_age_days", "log_keep_days", unit="days")
    _manager_counts = bounded(
        0,
        "history_max_count",
        "max_sessions_per_owner",
        "max_gpu_per_owner",
        "max_cpu_per_owner",
        "log_keep_lines",
    )
    _manager_sizes = bounded(1, "max_size", unit="a cluster size")
    _manager_images = image_names("default_image")

    @validate("registry_credentials")
    def _check_registry_credentials(self, proposal: Any) -> Any:
        try:
            validate_credentials(proposal["value"])
        except ValueError as exc:
            raise TraitError(str(exc)) from None
        return proposal["value"]

    db_path = Unicode(config=True, help="SQLite file of sessions, history and keys.")
    data_root = Unicode(config=True, help="Directory holding the named data folders.")
    default_image = Unicode(
        naming.DEFAULT_IMAGE, config=True, help="Image used when none is given."
    )
    prepare_timeout = Float(
        300.0,
        config=True,
        help="Seconds a placed session may take to get every container ready "
        "(start-up and bootstrap) before the launch fails.",
    )
    pending_poll_interval = Float(
        1.0, config=True, help="Seconds between placement attempts of a PENDING session."
    )
    orphan_policy = Enum(
        ["remove", "adopt"],
        "remove",
        config=True,
        help="What start-up reconciliation does with containers and networks of this "
        "manager that have no live record: remove them (logged) or adopt them as "
        "running sessions.",
    )
    keep_logs = Bool(
        True,
        config=True,
        help="Keep each container's log when its session is terminated, so `logs` (CLI, "
        "REST, the Lab panel, %cluster logs) still reads it afterwards.",
    )
    log_keep_lines = Int(10000, config=True, help="Most lines of each container's log kept.")
    log_keep_size = Unicode(
        "5m", config=True, help="Most bytes of each container's log kept, e.g. 5m."
    )
    log_keep_days = Float(
        14.0,
        config=True,
        help="Days kept logs stay (they also go when the session leaves the history).",
    )
    folders_per_owner = Bool(
        False,
        config=True,
        help="Keep each owner's data folders apart (under data_root/.owners/<owner>/): "
        "users list, mount, create and remove only their own. On in the shared service "
        "(jupyter cluster serve); off in single-user mode.",
    )
    shared_folders = List(
        Unicode(),
        config=True,
        help="Names of folders under data_root/.shared/ that every user may mount, always "
        "read-only (e.g. datasets); an administrator creates them on the host.",
    )
    service_url = Unicode(
        "",
        config=True,
        help="URL of a shared jupyter-cluster service (team mode, e.g. "
        "http+unix://%2Frun%2Fjupyter-cluster-hub%2Fcluster.sock/services/cluster/: its "
        "Unix socket, which must belong to root in directories only root may write; or "
        "an https:// URL). When set, every front end of this process uses that service "
        "instead of an engine of its own, and needs no Docker access. Default: the "
        "JUPYTER_CLUSTER_SERVICE_URL environment variable (a JupyterHub spawner sets "
        "it), else empty (single-user mode).",
    )
    service_allow_http = Bool(
        False,
        config=True,
        help="Also send this server's token to a plain http:// service_url. Off: whoever "
        "can take that address (e.g. a local user binding a loopback port while the "
        "service restarts) would get the token. Only for a network where nobody else can.",
    )
    service_token = Unicode(
        "",
        config=True,
        help="Token sent to the shared service; it names the user. Default: "
        "JUPYTERHUB_API_TOKEN (the single-user server's own token under JupyterHub).",
    )
    service_timeout = Float(
        30.0, config=True, help="Seconds a request to the shared service may take."
    )
    agent_factory = AnyTrait(
        default_value=None,
        allow_none=True,
        help="Callable AgentConfig -> Agent (tests inject fakes); None means Docker.",
    )

    @default("db_path")
    def _default_db_path(self) -> str:
        return default_db_path()

    @default("data_root")
    def _default_data_root(self) -> str:
        return default_data_root()


class EngineSettings(ManagerSettings, UtilizationIdleSettings, QueueSettings, WarmPoolSettings):
    """Every trait of the ``c.ClusterManager`` section: what the engine inherits and
    the CLI's quick path reads (one list of mixins, so neither lacks one)."""
