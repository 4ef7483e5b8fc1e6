"""How every container of a session is confined: ``c.ContainerHardening.*``.

The manager makes one :class:`ContainerHardening` (its child, so the usual config
files apply) and hands its :meth:`~ContainerHardening.limits` to the launcher;
:func:`~jupyter_cluster.engine.agents.docker.models.container_config` turns them
into Docker's HostConfig. The same limits hold for every container of a session,
on every agent.

Kept capabilities, and why (everything else of Docker's default set is dropped):

- ``CHOWN``, ``DAC_OVERRIDE``, ``FOWNER``: the start-up script (root) creates user
  ``work`` if the image lacks it and hands ``/home/work`` and its runtime files to it;
- ``SETUID``, ``SETGID``: it drops to ``work`` for the bootstrap command, and sshd
  switches to ``work`` for each login;
- ``SYS_CHROOT``: sshd's privilege separation;
- ``KILL``: sshd and the start-up script end processes of ``work``;
- ``AUDIT_WRITE``: sshd records logins.

Containers given RDMA devices (a resource group with ``rdma``, :mod:`.fast_network`)
also keep ``IPC_LOCK``, added to this list, and no memlock limit; no other does.

``no-new-privileges`` stops setuid binaries (e.g. sudo in an image) from giving
``work`` root again. Nothing is privileged, no Docker socket is mounted and no
host path but configured data folders.

``restrict_egress`` (off by default) denies the ranges of ``egress_deny`` to every
container (see :mod:`.launch.egress`): by default the agent itself and the link-local
range, where cloud metadata services answer.
"""

from __future__ import annotations

from traitlets import Bool, Int, List, Unicode
from traitlets.config import LoggingConfigurable

from ..core.egress import AGENT, check_denied
from ..core.naming import DEFAULT_IMAGE
from ..core.units import parse_size
from .agents.base import KEPT_CAPABILITIES, Limits


class ContainerHardening(LoggingConfigurable):
    """Limits every container of every session gets (configurable per site)."""

    pids_limit = Int(
        4096,
        config=True,
        help="Most processes and threads per container (a fork bomb stops there); 0: no limit.",
    )
    capabilities = List(
        Unicode(),
        default_value=list(KEPT_CAPABILITIES),
        config=True,
        help="Linux capabilities containers keep; all others are dropped. The default is "
        "what the start-up script and sshd need (see the README's security notes).",
    )
    no_new_privileges = Bool(
        True, config=True, help="Forbid gaining privileges through setuid binaries (sudo…)."
    )
    log_max_size = Unicode(
        "20m", config=True, help="Size at which Docker rotates a container's log, e.g. 20m."
    )
    log_max_files = Int(3, config=True, help="Rotated log files Docker keeps per container.")
    writable_layer_size = Unicode(
        "",
        config=True,
        help="Cap on a container's writable layer, e.g. 10g (Docker's storage-opt size: "
        "works with overlay2 on xfs with project quotas, devicemapper, btrfs, zfs); empty: "
        "no cap.",
    )

    restrict_egress = Bool(
        False,
        config=True,
        help="Deny the address ranges of egress_deny to every container of every session "
        "(prohibit routes set from outside the container, which cannot undo them).",
    )
    egress_deny = List(
        Unicode(),
        default_value=[AGENT, "169.254.0.0/16"],
        config=True,
        help="With restrict_egress: address ranges (CIDR) containers cannot reach; 'agent' "
        "means the agent host (its address on the session network and its configured "
        "address). The default also denies link-local addresses (cloud metadata).",
    )
    egress_image = Unicode(
        DEFAULT_IMAGE,
        config=True,
        help="Image (on every agent, with iproute2) of the short-lived container that sets "
        "the egress rules in a session container's network namespace.",
    )

    def limits(self) -> Limits:
        """The configured limits, checked (sizes parse, counts are sane)."""
        parse_size(self.log_max_size, "ContainerHardening.log_max_size")
        if self.writable_layer_size:
            parse_size(self.writable_layer_size, "ContainerHardening.writable_layer_size")
        return Limits(
            pids_limit=max(self.pids_limit, 0),
            capabilities=tuple(c.upper().removeprefix("CAP_") for c in self.capabilities),
            no_new_privileges=self.no_new_privileges,
            log_max_size=self.log_max_size,
            log_max_files=max(self.log_max_files, 1),
            writable_layer_size=self.writable_layer_size,
            egress_deny=check_denied(self.egress_deny) if self.restrict_egress else (),
            egress_image=self.egress_image,
        )
