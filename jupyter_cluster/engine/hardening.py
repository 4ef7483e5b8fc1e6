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

Session processes run as ``work`` with uid ``work_uid`` (1000, the default image's;
the shared service uses a uid of its own, :data:`~jupyter_cluster.core.uids.
TEAM_WORK_UID`). With ``reserved_work_uid`` (on in the service) the engine refuses to
start when a host account, group or subordinate id range holds that uid: that
account could otherwise reach every session through ``/proc``.

``guard_bridges`` (on by default) keeps other local users of an agent host out of
session containers' listeners (see :mod:`jupyter_cluster.core.host_guard`).

``restrict_egress`` (off by default) denies the ranges of ``egress_deny`` to every
container (see :mod:`.launch.egress`): by default the agent itself and the link-local
range, where cloud metadata services answer.
"""

from __future__ import annotations

import grp
import pwd
from pathlib import Path

from traitlets import Bool, Float, Int, List, Unicode
from traitlets.config import LoggingConfigurable

from ..core.egress import AGENT, check_denied
from ..core.naming import DEFAULT_IMAGE
from ..core.uids import DEFAULT_WORK_UID, SubordinateRange, check_work_uid, parse_subordinate
from ..core.units import parse_size
from ..errors import UnsafeSetting
from ..setting_bounds import bounded, waits
from ..setting_images import image_names
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

    guard_bridges = Bool(
        True,
        config=True,
        help="Refuse new connections that local users other than root open from an agent "
        "host into session containers through their bridge addresses (a firewall chain "
        "on each agent host, put there by a short-lived container of egress_image with "
        "NET_ADMIN). Published ports (main1's SSH) stay reachable. Off: every local user "
        "of an agent host can connect to any listener in any session container.",
    )
    guard_refresh = Float(
        300.0,
        min=1.0,
        config=True,
        help="Seconds after which each engine process puts the guard of session bridges "
        "on an agent host again: at a launch, and in a Jupyter server (or the shared "
        "service) every quarter of this on the hosts of active sessions. A host whose "
        "firewall is reset while it keeps answering is guarded again within this and a "
        "quarter; each putting runs one short-lived container there.",
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
        "means the agent hosts: every agent's configured address, and every address of "
        "the session's own agent host (a firewall chain there refuses new connections "
        "from restricted sessions' bridges; single-node sessions). The default also "
        "denies link-local addresses (cloud metadata).",
    )
    egress_image = Unicode(
        DEFAULT_IMAGE,
        config=True,
        help="Image (on every agent, with iproute2 and iptables) of the short-lived "
        "containers that set the egress rules in a session container's network namespace "
        "and the firewall chain on the agent host.",
    )

    work_uid = Int(
        DEFAULT_WORK_UID,
        config=True,
        help="The uid (and gid) of user work in every container: session processes and "
        "the files they write in data folders have it on the host too. The shared service "
        "(jupyter cluster serve) uses a uid no host account has.",
    )
    reserved_work_uid = Bool(
        False,
        config=True,
        help="Refuse to start when a host account or group, or a user's subordinate id "
        "range (/etc/subuid, /etc/subgid), holds work_uid: it could read and change every "
        "session's processes through /proc. On in the shared service.",
    )

    _hardening_waits = waits("guard_refresh")
    _hardening_counts = bounded(0, "pids_limit")
    _hardening_files = bounded(1, "log_max_files")
    # uid 0 would make work root; start.sh would refuse it only in each container
    _hardening_uid = bounded(1, "work_uid", unit="a uid")
    _hardening_images = image_names("egress_image")

    def check_reserved_uid(self) -> None:
        """With ``reserved_work_uid``, raise UnsafeSetting unless no host account,
        group or subordinate range holds ``work_uid`` (the manager calls this when
        it is made, so the service refuses to start)."""
        if not self.reserved_work_uid:
            return
        held = {g.gr_gid: f"group {g.gr_name}" for g in grp.getgrall()}
        held.update({p.pw_uid: p.pw_name for p in pwd.getpwall()})
        ranges: list[tuple[str, SubordinateRange]] = []
        for name in ("/etc/subuid", "/etc/subgid"):
            try:
                text = Path(name).read_text()
            except OSError:
                continue
            ranges += [(name, r) for r in parse_subordinate(text)]
        try:
            check_work_uid(self.work_uid, held, ranges)
        except ValueError as exc:
            raise UnsafeSetting(str(exc)) from None

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
            work_uid=self.work_uid,
            guard_bridges=self.guard_bridges,
        )
