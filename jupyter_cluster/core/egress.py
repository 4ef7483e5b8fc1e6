"""Egress rules, the pure part: which ranges are denied, and the script that denies them.

With ``c.ContainerHardening.restrict_egress``, the launcher calls
:func:`jupyter_cluster.engine.egress.apply_egress_rules` for every container right
after it starts. A throwaway container of ``egress_image`` that shares the session
container's network namespace, and holds only ``NET_ADMIN``, adds a "prohibit"
route for each denied range; then the launcher lets the start-up script go on (it waits, before the
bootstrap command, for the marker :data:`READY_MARKER`). The session's own
containers never get ``NET_ADMIN``, so nothing inside them (root included) can
remove the routes. Traffic between the session's containers is unaffected: their
network's own range is never denied.

``agent`` in the list stands for the agent itself: the gateway of the container's
network (the agent's address on it) and the agent's configured ``address`` when
that is a routable IP.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from ..errors import ClusterError
from . import naming

#: The word in ``egress_deny`` that means the agent's own addresses.
AGENT = "agent"
#: Put into a container when its rules apply: the start-up script waits for it.
GATE_FILE = f"{naming.RUNTIME_DIR}/egress-gate"
#: Put in once the rules are in place.
READY_MARKER = f"{naming.RUNTIME_DIR}/egress-ready"


def check_denied(entries: Sequence[str]) -> tuple[str, ...]:
    """``entries`` normalised (CIDRs, or ``agent``); raises ClusterError naming a bad one."""
    checked = []
    for entry in entries:
        text = entry.strip()
        if text.lower() == AGENT:
            checked.append(AGENT)
            continue
        try:
            checked.append(str(ipaddress.ip_network(text, strict=False)))
        except ValueError:
            raise ClusterError(
                f"ContainerHardening.egress_deny: {entry!r} is neither an address range "
                f"(e.g. 169.254.0.0/16) nor {AGENT!r}"
            ) from None
    return tuple(checked)


def rules_script(denied: Sequence[str], agent_address: str) -> str:
    """The shell script (iproute2) that adds a prohibit route per denied range."""
    ranges = [d for d in denied if d != AGENT]
    lines = ["set -e"]
    if AGENT in denied:
        lines.append("gw=$(ip route show default | awk '{print $3; exit}')")
        lines.append('[ -z "$gw" ] || ip route add prohibit "$gw"')
        try:
            address = ipaddress.ip_address(agent_address)
        except ValueError:
            address = None
        if address is not None and not (address.is_loopback or address.is_unspecified):
            ranges.append(f"{address}/{address.max_prefixlen}")
    for cidr in ranges:
        if ":" in cidr:  # only where the container has IPv6 at all
            lines.append(f"[ ! -s /proc/net/if_inet6 ] || ip -6 route add prohibit {cidr}")
        else:
            lines.append(f"ip -4 route add prohibit {cidr}")
    return "\n".join(lines) + "\n"
