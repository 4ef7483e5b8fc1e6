"""Egress rules, the pure part: which ranges are denied, and the script that denies them.

With ``c.ContainerHardening.restrict_egress``, the launcher calls
:func:`jupyter_cluster.engine.egress.apply_egress_rules` for every container right
after it starts. A throwaway container of ``egress_image`` that shares the session
container's network namespace, and holds only ``NET_ADMIN`` and ``NET_RAW``, adds
a "prohibit" route for each denied range; then the launcher lets the start-up
script go on (it waits, before the bootstrap command, for the marker
:data:`READY_MARKER`). The session's own containers never get ``NET_ADMIN``, so
nothing inside them (root included) can remove the rules. Traffic between the
session's containers is unaffected: their network's own range is never denied.

``agent`` in the list stands for the agent hosts: the gateway of the container's
network (the agent's address on it) and every agent's configured ``address`` when
that is a routable IP, by iptables rules in the container's namespace that refuse
new connections only (not routes: the host's own connections to the container, from
those addresses, need their replies); and every other address of the agent host (its
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
    bridge, run as root in the host's network namespace. Idempotent and safe to run
    from concurrent launches: the chain is replaced whole in one transaction
    (``iptables-restore --noflush``), never left empty, and duplicate jumps from
    ``INPUT`` are removed. Replies to the host's own connections (SSH, kernels) pass."""
    chain = HOST_CHAIN
    match = f"-i {BRIDGE_PREFIX}+ -j {chain}"
    jump = f"INPUT {match}"
    return (
        "\n".join(
            [
                "set -e",
                f"rules='*filter\n:{chain} - [0:0]",
                f"-A {chain} -m conntrack --ctstate ESTABLISHED,RELATED -j RETURN",
                f"-A {chain} -p tcp -j REJECT --reject-with tcp-reset",
                f"-A {chain} -j REJECT",
                "COMMIT'",
                "wall() {",
                '    printf \'%s\\n\' "$rules" | "$1-restore" -w --noflush',
                f'    "$1" -w -C {jump} 2>/dev/null || "$1" -w -I {jump}',
                f'    jumps="$("$1" -w -S INPUT | grep -c -- \'{match}\' || true)"',
                '    while [ "$jumps" -gt 1 ]; do',
                f'        "$1" -w -D {jump}',
                "        jumps=$((jumps - 1))",
                "    done",
                "}",
                "wall iptables",
                "[ ! -s /proc/net/if_inet6 ] || wall ip6tables",
            ]
        )
        + "\n"
    )


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
    """The shell script run in a container's network namespace: a prohibit route
    (iproute2) per denied range, and for ``agent`` (the gateway and each routable one
    of ``agent_addresses``) iptables rules refusing *new* connections only, so that
    the host's own connections to the container (SSH, kernels: their source is the
    gateway, or the engine's host) still get their replies."""
    ranges = [d for d in denied if d != AGENT]
    lines = ["set -e"]
    if AGENT in denied:
        hosts = ['"$gw"']
        for text in agent_addresses:
            try:
                address = ipaddress.ip_address(text)
            except ValueError:
                continue  # a host name: reached through the gateway, or not at all
            if not (address.is_loopback or address.is_unspecified) and str(address) not in hosts:
                hosts.append(str(address))
        lines.append("gw=$(ip route show default | awk '{print $3; exit}')")
        for host in hosts:
            tool = "ip6tables" if ":" in host else "iptables"
            guard = '[ -z "$gw" ] || ' if host == '"$gw"' else ""
            if tool == "ip6tables":
                guard = "[ ! -s /proc/net/if_inet6 ] || "
            new = f"OUTPUT -d {host} -m conntrack --ctstate NEW"
            lines.append(f"{guard}{tool} -w -A {new} -p tcp -j REJECT --reject-with tcp-reset")
            lines.append(f"{guard}{tool} -w -A {new} -j REJECT")
    for cidr in ranges:
        if ":" in cidr:  # only where the container has IPv6 at all
            lines.append(f"[ ! -s /proc/net/if_inet6 ] || ip -6 route add prohibit {cidr}")
        else:
            lines.append(f"ip -4 route add prohibit {cidr}")
    return "\n".join(lines) + "\n"
