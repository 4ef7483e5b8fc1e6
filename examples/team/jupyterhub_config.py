"""A JupyterHub for a team that shares jupyter-cluster's agents, on one machine.

Run it as root from a checkout, after the README's set-up (``make setup``: Docker,
the ``.venv`` with JupyterHub, and ``configurable-http-proxy`` from npm)::

    .venv/bin/jupyterhub -f examples/team/jupyterhub_config.py

then open http://127.0.0.1:8000 and log in as ``alice``, ``bob`` or ``admin``.

What it sets up:

- **Log-in**: JupyterHub's dummy authenticator. The users are ``alice`` and ``bob``,
  and ``admin``, a Hub admin (who sees every cluster session). Any password is
  accepted, unless ``JUPYTER_CLUSTER_HUB_PASSWORD`` is set in the Hub's environment:
  then that one shared password is required. The Hub listens on loopback only,
  since the dummy authenticator lets anyone in who can reach it.
- **Unix users**: each Hub user's single-user server runs as the Unix user of the same
  name (JupyterHub's default ``LocalProcessSpawner``). This file creates the missing
  ones with ``useradd -m`` (as JupyterHub's ``create_system_users`` does) and refuses
  to start if one of them is in the ``docker`` group: users never get Docker access.
- **Servers**: ``jupyterhub-singleuser`` of the Python environment running this Hub,
  opening JupyterLab; ``JUPYTER_CLUSTER_SERVICE_URL`` in their environment makes the
  jupyter_cluster extension in them a client of the shared service, which they call
  with their own ``JUPYTERHUB_API_TOKEN``. Named servers are allowed.
- **The service** ``cluster``: ``jupyter-cluster serve``, started and kept running by
  the Hub as root, at ``/services/cluster/`` (listening on 127.0.0.1:10101). It is
  the only process that talks to the Docker engines (the agents) and keeps the one
  store of sessions.
- **Scopes**: every user (the ``user`` role) may access the service, and their servers'
  tokens carry ``access:services!service=cluster`` next to JupyterHub's defaults; the
  service may read users (admin flag and groups).
- **State** under ``/srv/jupyter-cluster-hub`` (or ``$JUPYTER_CLUSTER_HUB_DIR``), which
  must be root's alone (mode 0700): the Hub's database, cookie secret and proxy pid
  file, and the service's Jupyter directories (``cluster/``), whose store and data
  folders default to ``cluster/data/cluster/``. The service's own configuration
  (e.g. ``c.ClusterManager.agents``) goes in ``cluster/config/``.

For a real site, change the authenticator (and drop the dummy password), the spawner
if servers should run elsewhere (containers, a batch system: then
``JUPYTER_CLUSTER_SERVICE_URL`` must be an address they can reach), ``bind_url``
(with TLS), the user lists, and the agents in the service's configuration.
"""

import grp
import os
import pwd
import subprocess
import sys
from pathlib import Path

c = get_config()  # noqa: F821  (defined by JupyterHub when it loads this file)

#: The Hub's users (their Unix users are made when missing), and its admins.
USERS = ["alice", "bob"]
ADMINS = ["admin"]
#: Where the cluster service listens (loopback: only the proxy and users' servers call it).
SERVICE_PORT = 10101
#: The bin directory of the Python environment running this Hub: the servers and the
#: service run from the same one (not the symlinks' targets: that would leave the venv).
BIN = Path(sys.executable).parent
#: Everything the Hub and the service keep.
STATE = Path(os.environ.get("JUPYTER_CLUSTER_HUB_DIR", "/srv/jupyter-cluster-hub"))
SERVICE_STATE = STATE / "cluster"


def user_exists(name: str) -> bool:
    """Whether the Unix user ``name`` exists."""
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def ensure_unix_user(name: str) -> None:
    """Create the Unix user ``name`` with a home directory unless it exists; refuse to
    go on if it is in the ``docker`` group (that is root on the machine)."""
    if not user_exists(name):
        done = subprocess.run(["useradd", "-m", name], capture_output=True, text=True)
        if done.returncode != 0 and not user_exists(name):  # not made meanwhile by another
            sys.exit(f"jupyterhub_config: useradd -m {name} failed: {done.stderr.strip()}")
    try:
        docker = grp.getgrnam("docker")
    except KeyError:
        return
    if name in docker.gr_mem or pwd.getpwnam(name).pw_gid == docker.gr_gid:
        sys.exit(f"jupyterhub_config: {name} is in the docker group; remove it (gpasswd -d)")


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


for user in USERS + ADMINS:
    ensure_unix_user(user)
check_python_usable(USERS[0])

# The state directory holds secrets (cookie secret, tokens in the database): root's only.
STATE.mkdir(mode=0o700, parents=True, exist_ok=True)
if STATE.stat().st_mode & 0o077:
    sys.exit(f"jupyterhub_config: {STATE} must be accessible by root only (chmod 700)")

c.JupyterHub.bind_url = "http://127.0.0.1:8000"
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
c.ConfigurableHTTPProxy.pid_file = str(STATE / "jupyterhub-proxy.pid")

c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allowed_users = set(USERS)
c.Authenticator.admin_users = set(ADMINS)
if os.environ.get("JUPYTER_CLUSTER_HUB_PASSWORD"):
    # One password for everyone (admin included). JupyterHub >= 5.3 logs that this is
    # deprecated in favour of "shared-password", which needs a second, admin password.
    c.DummyAuthenticator.password = os.environ["JUPYTER_CLUSTER_HUB_PASSWORD"]

c.JupyterHub.allow_named_servers = True
c.Spawner.cmd = [str(BIN / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.environment = {
    # The venv first, so `jupyter cluster` in a terminal is the CLI of this install
    # (the Hub's own PATH would otherwise be passed on, e.g. root's).
    "PATH": f"{BIN}:/usr/local/bin:/usr/bin:/bin",
    "JUPYTER_CLUSTER_SERVICE_URL": f"http://127.0.0.1:{SERVICE_PORT}/services/cluster/",
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
        "url": f"http://127.0.0.1:{SERVICE_PORT}",
        "command": [str(BIN / "jupyter-cluster"), "serve"],
        # No `user`: it runs as root, like the Hub, since it owns the Docker engine.
        "environment": {
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
