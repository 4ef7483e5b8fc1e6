"""A cold session of more than two containers on one agent gives its subs their
start-up files through one volume (``launch.shared_files``): the carrier's (sub1's)
one copy carries every other sub's tree, those subs get no copy of their own and
start with the command that copies their tree into place, once the carrier's copy is
in. main1 neither mounts the volume nor carries anything. Sessions of one or two
containers, across agents
(``test_main_created_early.py``) or on a warm set (``test_warm_pool.py``) keep the
copy per container; the volume goes with the session, also when a launch fails. The
fake agent keeps volumes and copies a sub's tree in when it starts, as the real
sub's first command does."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_cluster.core import naming
from jupyter_cluster.core.models import LaunchSpec
from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.engine.agents.base import FileEntry
from jupyter_cluster.engine.agents.fake import DEFAULT_IMAGE, FakeAgent
from jupyter_cluster.engine.launch.shared_files import carried
from jupyter_cluster.errors import AgentError, LaunchFailed

from .engine_parts import build

SHARED = naming.SHARED_FILES_DIR


def calls(agent: FakeAgent, method: str) -> list[str]:
    """The hostnames (or names) ``method`` was called for, in order."""
    return [target for m, target in agent.calls if m == method]


async def test_subs_get_their_files_through_the_carriers_one_copy(tmp_path: Path) -> None:
    agent = FakeAgent("local", ready_on_start=True)
    parts = build(tmp_path, agent)
    session = await parts.launcher.launch(LaunchSpec.create(image=DEFAULT_IMAGE, size=4))
    assert session.status is SessionStatus.RUNNING
    volume = naming.files_volume_name(session)
    labels, held = agent.volumes[volume]
    assert labels == {
        naming.LABEL_SESSION: session.id,
        naming.LABEL_MANAGER: parts.store.manager_id,
    }
    main, carrier, *subs = (agent.containers[c.container_id or ""] for c in session.containers)
    put = [c for m, c in agent.calls if m == "put_files"]
    assert sorted(put) == sorted([main.id, carrier.id]), "only main1 and sub1 are copied into"
    assert main.spec.mounts == (), "main1 does not mount the volume"
    assert not any(p.startswith(SHARED) for p in main.files), "main1's own files stay its own"
    (mount,) = carrier.spec.mounts
    assert (mount.source, mount.target, mount.volume, mount.readonly) == (
        volume,
        SHARED,
        True,
        False,
    )
    assert carrier.spec.command == main.spec.command, "the carrier starts as main1 does"
    assert carrier.files[naming.LOG_FIFO].fifo and not any(
        p.startswith(f"{SHARED}/sub1/") for p in held
    ), "the carrier's own files are its own"
    for sub in subs:
        host = sub.spec.hostname
        assert [(m.source, m.readonly) for m in sub.spec.mounts] == [(volume, True)]
        tree = f"{SHARED}/{host}/tree"
        script = f"{tree}{naming.RUNTIME_DIR}/start.sh"
        assert sub.spec.command == ("/bin/sh", script, "--files-from", tree)
        assert held[script].content == main.files[f"{naming.RUNTIME_DIR}/start.sh"].content
        # Its own host key (not main1's or the carrier's), as every known_hosts says.
        key = sub.files[f"{naming.RUNTIME_DIR}/ssh_host_ed25519_key"]
        assert key.content.decode() == held[f"{SHARED}/{host}/tree{key.path}"].content.decode()
        assert key.content not in (main.files[key.path].content, carrier.files[key.path].content)
        assert key.mode == 0o600 and sub.files[naming.LOG_FIFO].fifo
    # The carrier is created before the other subs, and they start once its copy is in.
    order = [c for c in agent.calls if c[0] in ("create_container", "put_files", "start_container")]
    created = [t for m, t in agent.calls if m == "create_container"]
    assert created.index(carrier.spec.name) < min(created.index(s.spec.name) for s in subs)
    starts = [t for m, t in agent.calls if m == "start_container"]
    assert starts[0] == main.id, "main1 starts first"
    filled = agent.calls.index(("put_files", carrier.id))
    assert all(agent.calls.index(("start_container", s.id)) > filled for s in subs), order
    await parts.terminator.terminate(session.id)
    assert agent.volumes == {} and agent.containers == {}
    parts.close()


@pytest.mark.parametrize("size", [1, 2])
async def test_a_session_of_one_or_two_containers_gets_no_volume(tmp_path: Path, size: int) -> None:
    """With one sub there is nobody to carry files for: each container gets its copy."""
    agent = FakeAgent("local", ready_on_start=True)
    parts = build(tmp_path, agent)
    session = await parts.launcher.launch(LaunchSpec.create(image=DEFAULT_IMAGE, size=size))
    assert session.status is SessionStatus.RUNNING
    assert calls(agent, "create_volume") == [] and agent.volumes == {}
    assert len(agent.containers) == size
    for box in agent.containers.values():
        assert box.spec.mounts == () and f"{naming.RUNTIME_DIR}/start.sh" in box.files
    parts.close()


@pytest.mark.parametrize(
    ("failing", "error"),
    [
        ("start_container:sub2", "sub2 would not start"),
        ("create_volume", "no space left"),
        ("put_files:sub1", "the carrier's copy failed"),
        ("create_container:sub1", "the carrier was not made"),
    ],
)
async def test_a_failed_launch_leaves_no_volume(tmp_path: Path, failing: str, error: str) -> None:
    """A sub that fails, a volume that cannot be made, a carrier that is not made or
    whose copy fails (the subs waiting on it do not wait on): the launch fails saying
    why, and nothing of it is left."""
    agent = FakeAgent("local", ready_on_start=True)
    agent.fail_on[failing] = AgentError(f"agent local: {error}", "local")
    parts = build(tmp_path, agent)
    session = await parts.launcher.submit(LaunchSpec.create(image=DEFAULT_IMAGE, size=3))
    with pytest.raises(LaunchFailed, match=error):
        await parts.launcher.drive(session.id)
    assert agent.containers == {} and agent.networks == {} and agent.volumes == {}
    assert calls(agent, "create_volume") == [naming.files_volume_name(session)]
    parts.close()


def test_carried_files_sit_below_a_folder_only_root_enters() -> None:
    key = FileEntry("/opt/jupyter-cluster/key", b"secret", 0o600)
    mine = FileEntry("/home/work/.ssh/id", b"id", 0o600, 1000, 1000)
    entries = {e.path: e for e in carried({"sub1": [key, mine]})}
    top, host, tree = SHARED, f"{SHARED}/sub1", f"{SHARED}/sub1/tree"
    assert list(entries)[:3] == [top, host, tree]
    assert [(entries[p].mode, entries[p].uid, entries[p].directory) for p in (top, host)] == [
        (0o700, 0, True)
    ] * 2
    assert entries[tree].mode == 0o755, "the tree's top becomes / when copied"
    assert entries[tree + key.path] == FileEntry(tree + key.path, b"secret", 0o600)
    assert (entries[tree + mine.path].uid, entries[tree + mine.path].mode) == (1000, 0o600)
