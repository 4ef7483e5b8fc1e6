"""``jupyter cluster serve``: the shared service of a team, a JupyterHub service.

One process owns the agents and the store for every user: a Jupyter server that
runs only the jupyter_cluster extension, behind JupyterHub's token
authentication (:mod:`.hub_auth`), with every other route of the server refused
and its terminals off. Users' servers reach it with their own Hub token
(``ClusterManager.service_url``) and never hold Docker credentials.

Why the server extension as a Hub service rather than a separate daemon: the
REST API, the events stream, owner scoping and per-user limits are the same code
(and the same tests) as in single-user mode; JupyterHub starts and stops it
(a managed service) and gives it its token.

Where it listens: ``JUPYTER_CLUSTER_SERVE_URL`` when its environment has one (the
address users' servers get as ``JUPYTER_CLUSTER_SERVICE_URL``), else
``JUPYTERHUB_SERVICE_URL`` (a service the Hub routes to, with a ``url``). For a team
on one machine that is a Unix socket
(``http+unix://%2Frun%2Fjupyter-cluster-hub%2Fcluster.sock/services/cluster/``): the
service refuses to listen unless only root can put a socket there (the check users'
servers make before sending their tokens, :mod:`jupyter_cluster.client.address`),
and makes it connectable by everyone (mode 0666; every request needs a Hub token).

Called by the CLI's ``serve`` command; extra ``--Class.trait=value`` arguments
configure it like any Jupyter application (``jupyter_cluster_config`` files and
``jupyter_server_config`` files on the Jupyter config path apply too).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlparse

from traitlets.config import Config

from ..client.address import check, parse
from ..core.uids import TEAM_WORK_UID
from ..errors import UnsafeSetting

DEFAULT_URL = "http://127.0.0.1:10101"


def listen_config(environ: dict[str, str]) -> dict[str, Any]:
    """The ``ServerApp`` settings of where to listen (see the module docstring)."""
    own = environ.get("JUPYTER_CLUSTER_SERVE_URL")
    if own:  # given to the service on purpose (JupyterHub sets a dummy one without a url)
        url = urlparse(own)
        prefix = url.path or "/"
    else:
        url = urlparse(environ.get("JUPYTERHUB_SERVICE_URL") or DEFAULT_URL)
        prefix = environ.get("JUPYTERHUB_SERVICE_PREFIX") or "/"
    if url.scheme == "http+unix":
        address = parse(url.geturl())
        try:
            check(address, allow_http=False)
        except UnsafeSetting as exc:
            raise SystemExit(f"jupyter cluster serve: {exc}") from exc
        base = prefix if prefix.endswith("/") else prefix + "/"
        return {"sock": address.socket, "sock_mode": "0666", "base_url": base}
    if url.scheme not in ("http", "https") or not url.hostname:
        raise SystemExit(
            f"jupyter cluster serve: the service's URL {url.geturl()!r} is not an "
            "http(s) or http+unix URL (JUPYTER_CLUSTER_SERVE_URL, or JUPYTERHUB_SERVICE_URL "
            "from the service's 'url')"
        )
    try:
        port = url.port or (443 if url.scheme == "https" else 80)
    except ValueError as exc:  # not a number, or out of range
        raise SystemExit(
            f"jupyter cluster serve: the service's URL {url.geturl()!r} has no valid port "
            f"({exc}); give one from 1 to 65535"
        ) from None
    return {"ip": url.hostname, "port": port, "base_url": prefix}


def only_this_extension() -> dict[str, bool]:
    """``ServerApp.jpserver_extensions`` of the service: jupyter_cluster, and every
    other server extension enabled in the Jupyter config path turned off. The
    service runs as root: an extension installed in its environment (a dependency
    of JupyterLab, say) would otherwise load there too, guarded only by its own
    checks (review X14). jupyter_server adds extensions of the config path only
    when they are not named here already."""
    from jupyter_core.paths import jupyter_config_path
    from jupyter_server.extension.config import ExtensionConfigManager

    found = ExtensionConfigManager(read_config_path=jupyter_config_path())
    extensions = dict.fromkeys(found.get_jpserver_extensions(), False)
    extensions.update(dict.fromkeys(("jupyterlab", "notebook", "notebook_shim"), False))
    extensions.update({"jupyter_server_terminals": False, "jupyter_cluster": True})
    return extensions


def service_config(environ: dict[str, str]) -> Config:
    """The server configuration of the service, from a Hub service's environment."""
    listen = listen_config(environ)
    if not environ.get("JUPYTERHUB_API_TOKEN") or not environ.get("JUPYTERHUB_API_URL"):
        raise SystemExit(
            "jupyter cluster serve: JUPYTERHUB_API_TOKEN and JUPYTERHUB_API_URL are not set; "
            "run it as a JupyterHub service (c.JupyterHub.services, see examples/team/)"
        )
    return Config(
        {
            "ServerApp": {
                **listen,
                "port_retries": 0,
                "open_browser": False,
                "allow_root": True,
                "terminals_enabled": False,
                "allow_unauthenticated_access": False,
                "identity_provider_class": "jupyter_cluster.server.hub_auth."
                "HubTokenIdentityProvider",
                "authorizer_class": "jupyter_cluster.server.hub_auth.ClusterOnlyAuthorizer",
                "jpserver_extensions": only_this_extension(),
            },
            # Clients send Hub tokens: no token of the server's own to print or accept.
            "HubTokenIdentityProvider": {"token": ""},
            # Kernels are started by each user's own server, never here.
            # /metrics answers any Hub user: keep other users' requests out of it.
            "ClusterApp": {"kernels_here": False, "record_request_metrics": False},
            # Each user's data folders are their own; users' servers reach kernels over
            # SSH, so main1 publishes no kernel port for other host users to reach.
            "ClusterManager": {"folders_per_owner": True, "kernel_transport": "ssh"},
            # Session processes get a uid no host account has, checked at start: a
            # user with the same uid could reach every session through /proc.
            "ContainerHardening": {"work_uid": TEAM_WORK_UID, "reserved_work_uid": True},
        }
    )


def main(argv: Sequence[str] = (), environ: dict[str, str] | None = None) -> Any:
    """Run the service until it is stopped (JupyterHub sends SIGTERM)."""
    from jupyter_server.serverapp import ServerApp

    config = service_config(dict(os.environ if environ is None else environ))
    # The service is the engine: it must never become a client of a service itself.
    os.environ.pop("JUPYTER_CLUSTER_SERVICE_URL", None)
    return ServerApp.launch_instance(argv=list(argv), config=config)


if __name__ == "__main__":
    main(sys.argv[1:])
