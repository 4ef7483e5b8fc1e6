"""A session's start-up files reach its subs through one volume, not one copy each.

Copying files into a created container (``PUT /containers/{id}/archive``) is the
largest part of Docker's own work per container of a launch that a session can
avoid: Docker mounts the container's file system and unpacks the tar into it. On
this project's 2-CPU test machine dockerd spent about 0.8 s less CPU on 16 bare
containers given their files through one volume than on 16 given a copy each, and
a size-16 launch went from 1.00 to 0.90-0.94 of ``bench/bench_launch.py``'s floor.

So a cold session with more than two containers on one agent gets a named volume
(:func:`~..core.naming.files_volume_name`), mounted at
:data:`~..core.naming.SHARED_FILES_DIR` in every sub: read-write in the carrier
(sub1), read-only in the others. The carrier is created first, ahead of the
session's network as main1 is (:func:`.creating.created_early`); its one copy
carries its own files and, under ``SHARED_FILES_DIR/<host>/``, those of every other
sub, while the network and those subs are being made. A sub's first command is its
start-up script, run from the volume, which copies the sub's tree into place
(``cp -a``) before anything else; the subs start once the carrier's copy is in and main1
started. main1 does not mount the volume: its own copy stays as small as at size 1,
so the container of the kernel starts as early at every size (when main1 carried the
files, its copy took 0.06 s at size 2 and 0.3 s at size 16 on that machine, and
everything waited on it). Only root reads the volume (its top folder is root's, mode
0700).

Sessions across agents (each agent would need its own volume and carrier), warm
sets (their containers exist already) and host-network sessions keep the copy per
container. Used by :mod:`.bring_up`; :mod:`.teardown` removes the volume.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from ...core import naming
from ...core.models import Container, Session
from ..agents.base import Agent, BindMount, FileEntry
from .creating import made
from .specs import START_COMMAND


@dataclass
class SharedFiles:
    """The volume of one launch, and how its containers use it."""

    session: Session
    #: Done once the volume exists (containers that mount it are created after).
    made: asyncio.Future[None]
    #: Set once the carrier is created (the other subs are created after it) and
    #: once its copy is in (they start after it). A carrier that fails fails the
    #: launch, which cancels the subs waiting on these.
    carrier_created: asyncio.Event = field(default_factory=asyncio.Event)
    filled: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def carrier(self) -> str:
        """The host whose one copy fills the volume: sub1, not main1, so main1's copy
        stays as small as at size 1 and the kernel's container starts as early."""
        return self.session.containers[1].host

    @property
    def carried_hosts(self) -> tuple[Container, ...]:
        """The subs whose files the carrier's copy brings (every sub but the carrier)."""
        return tuple(c for c in self.session.containers[1:] if c.host != self.carrier)

    @property
    def name(self) -> str:
        """The volume's Docker name."""
        return naming.files_volume_name(self.session)

    def mount(self, carrier: bool) -> BindMount:
        """The volume's mount in a sub: read-write in the carrier; else read-only."""
        return BindMount(self.name, naming.SHARED_FILES_DIR, readonly=not carrier, volume=True)

    def command(self, host: str) -> tuple[str, ...]:
        """A sub's first command: its start-up script, run from the volume, which
        copies the sub's files into place first (one program fewer than a shell that
        copies, then starts the script)."""
        tree = f"{naming.SHARED_FILES_DIR}/{host}/tree"
        shell, script = START_COMMAND
        return (shell, tree + script, "--files-from", tree)


def start_sharing(session: Session, agent: Agent, manager_id: str) -> SharedFiles:
    """Begin creating the session's volume on ``agent`` (removed again if the launch
    is cancelled before Docker answered); bring_up awaits :attr:`SharedFiles.made`."""
    name = naming.files_volume_name(session)
    labels = naming.network_labels(session, manager_id)

    async def undo(_: None) -> None:
        await agent.remove_volume(name)

    creating = asyncio.ensure_future(made(agent.create_volume(name, labels), undo))
    return SharedFiles(session, creating)


def carried(files_by_host: Mapping[str, Sequence[FileEntry]]) -> list[FileEntry]:
    """What main1's copy adds for the subs: each sub's files under
    ``SHARED_FILES_DIR/<host>/tree`` (the tree's top becomes ``/`` when copied, hence
    root's and 0755), below a top folder only root may enter."""
    top = naming.SHARED_FILES_DIR
    entries = [FileEntry(top, b"", 0o700, directory=True)]
    for host, files in files_by_host.items():
        tree = f"{top}/{host}/tree"
        entries.append(FileEntry(f"{top}/{host}", b"", 0o700, directory=True))
        entries.append(FileEntry(tree, b"", 0o755, directory=True))
        entries += [replace(entry, path=tree + entry.path) for entry in files]
    return entries
