"""The agent host's guard of session bridges, the pure part: bridge names and the script.

Docker routes every bridge network from its host, so without a guard any local user
of an agent host reaches every listener in a session container (TensorBoard, a
``torch.distributed`` rendezvous, a dashboard) through the container's address.
With ``ContainerHardening.guard_bridges`` (on by default) every session bridge gets
a Linux name starting with :data:`BRIDGE_PREFIX` (:func:`session_bridge`,
:func:`warm_bridge`; restricted sessions' ``jce…`` bridges too), and a chain on the
agent host (:func:`guard_script`, put there by each engine process with
:class:`~jupyter_cluster.engine.agents.host_guard.HostGuards`) refuses the new
connections that processes of users other than root open into such a bridge or
into ``docker_gwbridge`` (multi-node containers' way out, routed from the host as
well). Connections to published ports pass (Docker rewrote their destination: main1's
SSH port, the kernel ports of ``kernel_transport: direct``), as do root's (Docker's
port proxy, an engine running as root), replies, and traffic between containers,
which the host forwards rather than sends.
"""

from __future__ import annotations

from . import egress

#: Every guarded bridge's Linux name starts with this (the chain's interface match).
BRIDGE_PREFIX = "jc"
#: Linux allows 15 characters for an interface name: a 3-letter prefix and 12 of an id.
ID_CHARS = 12
#: The agent host's iptables chain (filter table, jumped to from OUTPUT).
GUARD_CHAIN = "JUPYTER-CLUSTER-USERS"
#: Bridges the chain guards besides the sessions' own: Swarm's bridge for overlay
#: containers' traffic to the outside, which gives each an address the host routes.
OTHER_BRIDGES = ("docker_gwbridge",)


def session_bridge(session_id: str, restricted: bool = False) -> str:
    """The Linux name of a single-node session's bridge: ``jcs`` and 12 of its id, or
    for a ``restrict_egress`` session the ``jce…`` name its egress chain matches."""
    if restricted:
        return egress.bridge_name(session_id)
    return "jcs" + session_id.replace("-", "")[:ID_CHARS]


def warm_bridge(set_id: str) -> str:
    """The Linux name of a warm set's bridge: ``jcw`` and 12 of the set's id."""
    return "jcw" + set_id.replace("-", "")[:ID_CHARS]


def guard_script() -> str:
    """The shell script (iptables; ip6tables too where the host has IPv6) that puts
    the guard on the agent host, run as root in the host's network namespace.

    Idempotent and safe to run from several engines at once: the chain is replaced
    whole in one transaction (``iptables-restore --noflush``), never left empty, and
    duplicate jumps from ``OUTPUT`` are removed."""
    chain = GUARD_CHAIN
    interfaces = [f"{BRIDGE_PREFIX}+", *OTHER_BRIDGES]
    lines = [
        "set -e",
        f"rules='*filter\n:{chain} - [0:0]",
        f"-A {chain} -m conntrack ! --ctstate NEW -j RETURN",
        f"-A {chain} -m conntrack --ctstate DNAT -j RETURN",
        f"-A {chain} -m owner --uid-owner 0 -j RETURN",
        f"-A {chain} -p tcp -m owner ! --uid-owner 0 -j REJECT --reject-with tcp-reset",
        f"-A {chain} -m owner ! --uid-owner 0 -j REJECT",
        "COMMIT'",
        "guard() {",
        '    printf \'%s\\n\' "$rules" | "$1-restore" -w --noflush',
        f"    for out in {' '.join(interfaces)}; do",
        f'        "$1" -w -C OUTPUT -o "$out" -j {chain} 2>/dev/null '
        f'|| "$1" -w -I OUTPUT -o "$out" -j {chain}',
        f'        jumps="$("$1" -w -S OUTPUT | grep -c -F -- "-o $out -j {chain}" || true)"',
        '        while [ "$jumps" -gt 1 ]; do',
        f'            "$1" -w -D OUTPUT -o "$out" -j {chain}',
        "            jumps=$((jumps - 1))",
        "        done",
        "    done",
        "}",
        "guard iptables",
        "[ ! -s /proc/net/if_inet6 ] || guard ip6tables",
    ]
    return "\n".join(lines) + "\n"
