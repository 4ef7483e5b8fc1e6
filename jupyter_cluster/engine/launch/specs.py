"""What each container of a launch is made as: its create spec and its start-up files.

Used by :mod:`.bring_up` for every cold container and warm set taken, and by
:mod:`..warm_make` (what a warm main1 publishes).
"""

from __future__ import annotations

from dataclasses import replace

from ...core import naming
from ...core.egress import GATE_FILE
from ...core.host_network import HOST_NETWORK, peer_hosts
from ...core.models import Container, Session
from ...runtime.files import container_files, fresh_container_files
from ..agents.base import Agent, ContainerSpec, FileEntry
from .context import LaunchContext

#: Every container's first process (a sub given its files through a volume copies
#: them in first, see :mod:`.shared_files`).
START_COMMAND = ("/bin/sh", f"{naming.RUNTIME_DIR}/start.sh")


def published_ports(container: Container, agent: Agent) -> tuple[int, ...]:
    """What a container publishes on its agent's address: main1 its SSH port, and its
    kernel ports unless kernel traffic goes over SSH; subs nothing."""
    return published_ports_of(container.role, agent)


def published_ports_of(role: str, agent: Agent) -> tuple[int, ...]:
    """:func:`published_ports` of a container of ``role`` (the warm pool's too)."""
    if role != "main":
        return ()
    if agent.config.kernel_transport == "ssh":
        return (naming.SSH_PORT,)
    return (naming.SSH_PORT, *naming.KERNEL_PORTS)


def spec_for(session: Session, container: Container, ctx: LaunchContext) -> ContainerSpec:
    """The create spec of ``container`` (a cold one; the caller adds devices and the
    files volume): on the session's network, or the agent's own."""
    assert container.agent is not None
    if ctx.network.host_network:  # the agent's own network: nothing to publish or alias
        addresses = {a: agent.config.address for a, agent in ctx.agents.items()}
        return replace(
            _plain_spec(session, container, ctx),
            network=HOST_NETWORK,
            aliases=(),
            publish=(),
            extra_hosts=peer_hosts(session, addresses),
        )
    return _plain_spec(session, container, ctx)


def _plain_spec(session: Session, container: Container, ctx: LaunchContext) -> ContainerSpec:
    assert container.agent is not None
    return ContainerSpec(
        name=naming.container_name(session, container.host),
        image=session.spec.image,
        hostname=container.host,
        network=naming.network_name(session),
        aliases=(container.host,),
        env=naming.container_env(session, container),
        labels=naming.container_labels(session, container, ctx.manager_id),
        resources=session.spec.resources,
        command=START_COMMAND,
        gpu_ids=container.gpu_ids,
        mounts=ctx.mounts.get(container.agent, ()),
        publish=published_ports(container, ctx.agents[container.agent]),
        limits=ctx.limits,
    )


def start_files(session: Session, container: Container, ctx: LaunchContext) -> list[FileEntry]:
    """What ``container`` gets before it starts: :func:`container_files`, the egress
    gate when egress is restricted (the start-up script waits until the rules are in
    place), and, unless it is a warm one, :func:`fresh_container_files`."""
    files = container_files(session, container, ctx.keys, ctx.limits.work_uid)
    if ctx.limits.egress_deny:
        files.append(FileEntry(GATE_FILE, b"", 0o644))
    if container.host not in ctx.warm:
        files += fresh_container_files(ctx.limits.work_uid)
    return files
