"""A JupyterHub for a team that shares jupyter-cluster's agents, on one machine.

Run it as root from a checkout, after the README's set-up (``make setup``: Docker,
the ``.venv`` with JupyterHub, and ``configurable-http-proxy`` from npm)::

    .venv/bin/jupyterhub -f examples/team/jupyterhub_config.py

The first start creates the Unix users ``alice``, ``bob`` and ``clusteradmin``
without passwords; set them as root (``passwd alice``, or ``chpasswd``), then open
http://127.0.0.1:8000 and log in as one of them with that user's own password.

What it sets up:

- **Log-in**: JupyterHub's PAM authenticator: each user's own Unix password. Only
  ``alice`` and ``bob`` and the admin ``clusteradmin`` (a Hub admin: who sees every
  cluster session, and can act as any user, see SECURITY.md) may log in.
- **Unix users**: each Hub user's single-user server runs as the Unix user of the same
  name (JupyterHub's default ``LocalProcessSpawner``). This file creates the missing
  ones with ``useradd -m`` and records them in ``unix-users`` of the state directory
  (root's only). It never takes over an account it did not make: if one of the names
  exists already and is not in that record, it refuses to start and says what to do.
  It also refuses a user in the ``docker`` group: users never get Docker access.
- **Servers**: ``jupyterhub-singleuser`` of the Python environment running this Hub,
  opening JupyterLab; ``JUPYTER_CLUSTER_SERVICE_URL`` in their environment makes the
  jupyter_cluster extension in them a client of the shared service, which they call
  with their own ``JUPYTERHUB_API_TOKEN``. Named servers are allowed.
- **The service** ``cluster``: ``jupyter-cluster serve``, started and kept running by
  the Hub as root. It listens on the Unix socket ``/run/jupyter-cluster-hub/cluster.sock``
  (or in ``$JUPYTER_CLUSTER_HUB_RUN_DIR``), in a directory that is root's and that
  only root may write, so no other user can take its place, even while it restarts;
  users' servers send their tokens there only after checking exactly that. It is not
  routed by the Hub's proxy. It is the only process that talks to the Docker engines
  (the agents) and keeps the one store of sessions.
- **Caps** (``site_limits`` below): each user holds at most half the machine's CPUs and
  memory, in at most 4 sessions, and one session's containers at most half of its
  process ids; set your site's shares there. Sessions reach neither this machine nor
  cloud metadata addresses (``restrict_egress``).
- **Scopes**: every user (the ``user`` role) may access the service, and their servers'
  tokens carry ``access:services!service=cluster`` next to JupyterHub's defaults; the
  service may read users (admin flag and groups).
- **State** under ``/srv/jupyter-cluster-hub`` (or ``$JUPYTER_CLUSTER_HUB_DIR``), which
  must be root's alone (mode 0700): the Hub's database, cookie secret and proxy pid
  file, the record of the Unix users it made (``unix-users``, or
  ``$JUPYTER_CLUSTER_HUB_USERS_FILE``), and the service's Jupyter directories
  (``cluster/``), whose store and data folders default to ``cluster/data/cluster/``.
  The service's own configuration (e.g. ``c.ClusterManager.agents``) goes in
  ``cluster/config/``.

For a real site, change the authenticator if users should not log in with Unix
passwords (e.g. OAuth), the spawner if servers should run elsewhere (containers, a
batch system: then ``JUPYTER_CLUSTER_SERVICE_URL`` must be an ``https://`` address
they can reach, whose certificate they verify), ``bind_url`` (with TLS), the user
lists, and the agents in the service's configuration.
"""

import fcntl
import grp
import os
import pwd
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

c = get_config()  # noqa: F821  (defined by JupyterHub when it loads this file)

#: The Hub's users (their Unix users are made when missing), and its admins: names
#: unlikely to exist already, since an existing account is never taken over.
USERS = ["alice", "bob"]
ADMINS = ["clusteradmin"]
#: The bin directory of the Python environment running this Hub: the servers and the
#: service run from the same one (not the symlinks' targets: that would leave the venv).
BIN = Path(sys.executable).parent
#: Everything the Hub and the service keep (root's only).
STATE = Path(os.environ.get("JUPYTER_CLUSTER_HUB_DIR", "/srv/jupyter-cluster-hub"))
SERVICE_STATE = STATE / "cluster"
#: The Unix users this example made (root's only): the only existing ones it accepts.
MADE_USERS = Path(os.environ.get("JUPYTER_CLUSTER_HUB_USERS_FILE", str(STATE / "unix-users")))
#: The service's socket lives here: root's, and writable by root only, so that no one
#: else can put a socket in its place; everyone may traverse it (0755).
RUN = Path(os.environ.get("JUPYTER_CLUSTER_HUB_RUN_DIR", "/run/jupyter-cluster-hub"))
SOCKET = RUN / "cluster.sock"
#: Where users' servers (and the service itself) find the service.
SERVICE_URL = f"http+unix://{quote(str(SOCKET), safe='')}/services/cluster/"


def site_limits() -> list[str]:
    """The service's per-user caps, as ``serve`` arguments: no one user can take the
    whole machine from the others (each holds at most half its CPUs and memory, in at
    most 4 sessions), and one session's containers can use at most half of the host's
    process ids (``pid_max``), however large the session. Change them to your site's
    shares; they apply to every front end (REST, kernels, CLI, notebooks). They are
    command-line settings of the service, so they win over its configuration files
    (``cluster/config/``): change them here."""
    cpus = os.cpu_count() or 1
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**30
    pid_max = int(Path("/proc/sys/kernel/pid_max").read_text())
    max_size = 16  # ClusterManager.max_size
    return [
        "--ClusterManager.max_sessions_per_owner=4",
        f"--ClusterManager.max_cpu_per_owner={max(cpus / 2, 1.0)}",
        f"--ClusterManager.max_mem_per_owner={max(mem_gib // 2, 1)}g",
        f"--ClusterManager.max_size={max_size}",
        f"--ContainerHardening.pids_limit={max(pid_max // (2 * max_size), 64)}",
        # Sessions reach neither this host (the Hub, the service, users' servers, any
        # service on it) nor cloud metadata addresses: see the README's confinement.
        "--ContainerHardening.restrict_egress=True",
    ]


def user_exists(name: str) -> bool:
    """Whether the Unix user ``name`` exists."""
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def ensure_unix_user(name: str) -> None:
    """Create the Unix user ``name`` (with a home directory, no password) and record it in
    :data:`MADE_USERS`; refuse to go on if it exists but this example did not make it,
    or if it is in the ``docker`` group (that is root on the machine)."""
    MADE_USERS.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(MADE_USERS, os.O_RDWR | os.O_CREAT, 0o600)
    with os.fdopen(fd, "r+") as record:
        fcntl.flock(record, fcntl.LOCK_EX)  # another Hub may be starting
        made = record.read().split()
        if user_exists(name) and name not in made:
            sys.exit(
                f"jupyterhub_config: the Unix user {name} exists already and this example "
                f"did not make it (it is not in {MADE_USERS}). Its server would run as that "
                "account, and whoever logs in as it would have its files (and for an admin, "
                "every Hub user). Choose other names in USERS/ADMINS of this file; or, if "
                f"that account is meant for this Hub, add {name} to {MADE_USERS} (as root)."
            )
        if not user_exists(name):
            done = subprocess.run(["useradd", "-m", name], capture_output=True, text=True)
            if done.returncode != 0:
                sys.exit(f"jupyterhub_config: useradd -m {name} failed: {done.stderr.strip()}")
            record.seek(0, os.SEEK_END)
            record.write(name + "\n")
    try:
        docker = grp.getgrnam("docker")
    except KeyError:
        return
    if name in docker.gr_mem or pwd.getpwnam(name).pw_gid == docker.gr_gid:
        sys.exit(f"jupyterhub_config: {name} is in the docker group; remove it (gpasswd -d)")


def warn_without_password(name: str) -> None:
    """Say how to let ``name`` log in when its Unix account has no usable password."""
    done = subprocess.run(["passwd", "-S", name], capture_output=True, text=True)
    fields = done.stdout.split()
    if len(fields) > 1 and fields[1] in ("L", "NP"):
        print(
            f"jupyterhub_config: {name} cannot log in until root sets a password: passwd {name}",
            file=sys.stderr,
        )


def check_python_usable(name: str) -> None:
    """Fail now, not at each spawn, if ``name`` cannot run this environment's Python.

    Every directory above it, and above the Python it was made from, must be
    traversable by others: e.g. not a venv made from a Python under ``/root``.
    """
    probe = "import jupyterhub.singleuser, jupyter_cluster"
    argv = ["runuser", "-u", name, "--", sys.executable, "-c", probe]
    done = subprocess.run(argv, capture_output=True, text=True, cwd="/")
    if done.returncode != 0:
        sys.exit(
            f"jupyterhub_config: user {name} cannot run {sys.executable} ({probe}): "
            f"{done.stderr.strip()[-500:]}\nEvery directory above that environment and the "
            "Python it was made from (sys.base_prefix) must be traversable by other users."
        )


def make_socket_directory() -> None:
    """Create :data:`RUN` (root's, 0755) and check that only root can put a socket at
    :data:`SOCKET`, as users' servers will check before sending their tokens."""
    from jupyter_cluster.client.address import check, parse
    from jupyter_cluster.errors import UnsafeSetting

    RUN.mkdir(mode=0o755, parents=True, exist_ok=True)
    try:
        check(parse(SERVICE_URL), allow_http=False)
    except UnsafeSetting as exc:
        sys.exit(f"jupyterhub_config: {exc}")


# The state directory holds secrets (cookie secret, tokens in the database): root's only.
STATE.mkdir(mode=0o700, parents=True, exist_ok=True)
if STATE.stat().st_mode & 0o077:
    sys.exit(f"jupyterhub_config: {STATE} must be accessible by root only (chmod 700)")
for user in USERS + ADMINS:
    ensure_unix_user(user)
    warn_without_password(user)
check_python_usable(USERS[0])
make_socket_directory()

c.JupyterHub.bind_url = "http://127.0.0.1:8000"
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
c.ConfigurableHTTPProxy.pid_file = str(STATE / "jupyterhub-proxy.pid")

# Each user logs in with their own Unix password (PAM), set by root: `passwd alice`.
c.JupyterHub.authenticator_class = "pam"
c.Authenticator.allowed_users = set(USERS)
c.Authenticator.admin_users = set(ADMINS)

c.JupyterHub.allow_named_servers = True
c.Spawner.cmd = [str(BIN / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.environment = {
    # The venv first, so `jupyter cluster` in a terminal is the CLI of this install
    # (the Hub's own PATH would otherwise be passed on, e.g. root's).
    "PATH": f"{BIN}:/usr/local/bin:/usr/bin:/bin",
    "JUPYTER_CLUSTER_SERVICE_URL": SERVICE_URL,
}
# A server's JUPYTERHUB_API_TOKEN gets JupyterHub's default scopes (the `server` role:
# report activity, be accessed by its owner) and none for services: add the cluster
# service's. The Hub grants only what the user holds, hence the `user` role below.
c.Spawner.server_token_scopes = [
    "users:activity!user",
    "access:servers!server",
    "access:services!service=cluster",
]

c.JupyterHub.services = [
    {
        "name": "cluster",
        # No "url": JupyterHub's proxy routes to http(s) only, and a TCP port on this
        # machine could be taken by any user while the service restarts. The service
        # listens on SOCKET only; users' servers call it there.
        "command": [str(BIN / "jupyter-cluster"), "serve", *site_limits()],
        # No `user`: it runs as root, like the Hub, since it owns the Docker engine.
        "environment": {
            "JUPYTER_CLUSTER_SERVE_URL": SERVICE_URL,  # where it listens
            "JUPYTER_DATA_DIR": str(SERVICE_STATE / "data"),
            "JUPYTER_RUNTIME_DIR": str(SERVICE_STATE / "runtime"),
            "JUPYTER_CONFIG_DIR": str(SERVICE_STATE / "config"),
        },
        # An API, not a page: keep it out of the Hub's Services menu.
        "display": False,
    },
]
c.JupyterHub.load_roles = [
    # JupyterHub's default `user` role is ["self"], which grants no service: add ours
    # (users' own API tokens inherit it; their servers' tokens get it as asked above).
    {"name": "user", "scopes": ["self", "access:services!service=cluster"]},
    # The service resolves a caller from the caller's token alone; it reads a user's
    # admin flag and groups with its own token when that model lacks them.
    {"name": "cluster-service", "scopes": ["read:users"], "services": ["cluster"]},
]
