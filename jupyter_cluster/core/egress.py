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

``agent`` in the list stands for the agent hosts: the gateway of the container's
network (the agent's address on it) and every agent's configured ``address`` when
that is a routable IP, by routes; and every other address of the agent host (its
LAN address, ``docker0``, the gateways of other sessions' networks, made before or
after this one), by a firewall chain on the host (:func:`host_rules_script`):
a restricted session's bridge is named ``jce…`` (:func:`bridge_name`), and the
chain refuses every new connection that comes in on such a bridge to the host.
Sessions without the switch have ``jc-…`` networks with Docker's bridge names,
which the chain never matches.
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
#: Interface names of restricted sessions' bridges start with this (Linux allows 15
#: characters: the prefix and 12 of the session's id).
BRIDGE_PREFIX = "jce"
#: The agent host's iptables chain (filter table) that walls restricted bridges off.
HOST_CHAIN = "JUPYTER-CLUSTER-EGRESS"


def bridge_name(session_id: str) -> str:
    """The Linux name of a restricted session's bridge (``jce`` + 12 of its id)."""
    return BRIDGE_PREFIX + session_id.replace("-", "")[:12]


def host_rules_script() -> str:
    """The shell script (iptables; ip6tables too where the host has IPv6) that makes
    the agent host refuse every new connection arriving on a restricted session's
    bridge, run as root in the host's network namespace. Idempotent: each rule is
    added only when missing, so running it again changes nothing. Replies to the
    host's own connections (SSH, kernels) still pass."""
    rules = (
        "-m conntrack --ctstate ESTABLISHED,RELATED -j RETURN",
        "-p tcp -j REJECT --reject-with tcp-reset",
        "-j REJECT",
    )
    lines = ["set -e"]
    for tool, guard in (("iptables", ""), ("ip6tables", "[ ! -s /proc/net/if_inet6 ] || ")):
        steps = [f"{tool} -w -n -L {HOST_CHAIN} >/dev/null 2>&1 || {tool} -w -N {HOST_CHAIN}"]
        steps += [
            f"{tool} -w -C {HOST_CHAIN} {r} 2>/dev/null || {tool} -w -A {HOST_CHAIN} {r}"
            for r in rules
        ]
        jump = f"INPUT -i {BRIDGE_PREFIX}+ -j {HOST_CHAIN}"
        steps.append(f"{tool} -w -C {jump} 2>/dev/null || {tool} -w -I {jump}")
        lines += [f"{guard}{{ {step}; }}" if guard else step for step in steps]
    return "\n".join(lines) + "\n"


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


def rules_script(denied: Sequence[str], agent_addresses: Sequence[str]) -> str:
    """The shell script (iproute2) that adds a prohibit route per denied range
    (``agent``: the gateway and each routable one of ``agent_addresses``)."""
    ranges = [d for d in denied if d != AGENT]
    lines = ["set -e"]
    if AGENT in denied:
        lines.append("gw=$(ip route show default | awk '{print $3; exit}')")
        lines.append('[ -z "$gw" ] || ip route add prohibit "$gw"')
        for text in agent_addresses:
            try:
                address = ipaddress.ip_address(text)
            except ValueError:
                continue  # a host name: reached through the gateway, or not at all
            host = f"{address}/{address.max_prefixlen}"
            if not (address.is_loopback or address.is_unspecified) and host not in ranges:
                ranges.append(host)
    for cidr in ranges:
        if ":" in cidr:  # only where the container has IPv6 at all
            lines.append(f"[ ! -s /proc/net/if_inet6 ] || ip -6 route add prohibit {cidr}")
        else:
            lines.append(f"ip -4 route add prohibit {cidr}")
    return "\n".join(lines) + "\n"
