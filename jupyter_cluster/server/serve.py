"""``jupyter cluster serve``: the shared service of a team, a JupyterHub service.

One process owns the agents and the store for every user: a Jupyter server that
runs only the jupyter_cluster extension, behind JupyterHub's token
authentication (:mod:`.hub_auth`), with every other route of the server refused
and its terminals off. Users' servers reach it with their own Hub token
(``ClusterManager.service_url``) and never hold Docker credentials.

Why the server extension as a Hub service rather than a separate daemon: the
REST API, the events stream, owner scoping and per-user limits are the same code
(and the same tests) as in single-user mode; JupyterHub starts and stops it
(a managed service), proxies it under ``/services/cluster/`` and tells it where
to listen (``JUPYTERHUB_SERVICE_URL``, ``JUPYTERHUB_SERVICE_PREFIX``).

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

DEFAULT_URL = "http://127.0.0.1:10101"


def service_config(environ: dict[str, str]) -> Config:
    """The server configuration of the service, from a Hub service's environment."""
    url = urlparse(environ.get("JUPYTERHUB_SERVICE_URL") or DEFAULT_URL)
    if url.scheme not in ("http", "https") or not url.hostname:
        raise SystemExit(
            f"jupyter cluster serve: JUPYTERHUB_SERVICE_URL {url.geturl()!r} is not an "
            "http(s) URL; JupyterHub sets it from the service's 'url'"
        )
    if not environ.get("JUPYTERHUB_API_TOKEN") or not environ.get("JUPYTERHUB_API_URL"):
        raise SystemExit(
            "jupyter cluster serve: JUPYTERHUB_API_TOKEN and JUPYTERHUB_API_URL are not set; "
            "run it as a JupyterHub service (c.JupyterHub.services, see examples/team/)"
        )
    extensions = {"jupyter_cluster": True, "jupyterlab": False, "notebook": False}
    extensions.update({"jupyter_server_terminals": False, "notebook_shim": False})
    return Config(
        {
            "ServerApp": {
                "ip": url.hostname,
                "port": url.port or (443 if url.scheme == "https" else 80),
                "port_retries": 0,
                "base_url": environ.get("JUPYTERHUB_SERVICE_PREFIX") or "/",
                "open_browser": False,
                "allow_root": True,
                "terminals_enabled": False,
                "allow_unauthenticated_access": False,
                "identity_provider_class": "jupyter_cluster.server.hub_auth."
                "HubTokenIdentityProvider",
                "authorizer_class": "jupyter_cluster.server.hub_auth.ClusterOnlyAuthorizer",
                "jpserver_extensions": extensions,
            },
            # Clients send Hub tokens: no token of the server's own to print or accept.
            "HubTokenIdentityProvider": {"token": ""},
            # Kernels are started by each user's own server, never here.
            "ClusterApp": {"kernels_here": False},
            # Each user's data folders are their own; users' servers reach kernels over
            # SSH, so main1 publishes no kernel port for other host users to reach.
            "ClusterManager": {"folders_per_owner": True, "kernel_transport": "ssh"},
        }
    )


def main(argv: Sequence[str] = (), environ: dict[str, str] | None = None) -> Any:
    """Run the service until it is stopped (JupyterHub sends SIGTERM)."""
    from jupyter_server.serverapp import ServerApp

    config = service_config(dict(os.environ if environ is None else environ))
    return ServerApp.launch_instance(argv=list(argv), config=config)


if __name__ == "__main__":
    main(sys.argv[1:])
