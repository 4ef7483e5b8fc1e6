"""Where a notebook's kernel starts (core.workdir), and the parts around the decision:
the spec keeps the mounted folder, warm sets never serve such a session, agents know
whether they are this machine's engine, the engine mounts only a real directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jupyter_cluster.core.models import LaunchSpec, Session
from jupyter_cluster.core.naming import plan_containers
from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.core.warm import shape_of
from jupyter_cluster.core.workdir import (
    MOUNT_POINT,
    READ_ONLY_NOTE,
    Workdir,
    closed_to,
    in_data_folder,
    inside,
    map_cwd,
    notebook_in_main1,
    plan_workdir,
    read_only_root,
)
from jupyter_cluster.engine.agents.base import AgentConfig, BindMount
from jupyter_cluster.engine.agents.docker.models import mount_config
from jupyter_cluster.engine.folders import notebook_mount
from jupyter_cluster.errors import InvalidRequest
from jupyter_cluster.provisioning.workdir import NotebookDir

FACTS = {"enabled": True, "refused": "", "root": "/srv/lab", "root_owner": 1000, "work_uid": 1000}


def test_inside_only_below_the_root() -> None:
    assert inside("/srv/lab", "/srv/lab") == "."
    assert inside("/srv/lab", "/srv/lab/a/b") == "a/b"
    assert inside("/srv/lab/", "/srv/lab/a") == "a"
    assert inside("/srv/lab", "/srv/labx/a") is None  # a prefix is not a parent
    assert inside("/srv/lab", "/srv") is None
    assert inside("/srv/lab", "/srv/lab/../etc") is None
    assert inside("/srv/lab", "relative/a") is None


def test_a_notebook_under_an_owned_root_starts_in_its_folder_in_the_mount() -> None:
    plan = plan_workdir(cwd="/srv/lab/proj/x", **FACTS)
    assert (plan.host_root, plan.cwd, plan.note) == ("/srv/lab", f"{MOUNT_POINT}/proj/x", "")
    at_root = plan_workdir(cwd="/srv/lab", **FACTS)
    assert (at_root.cwd, at_root.note) == (MOUNT_POINT, "")


def test_no_notebook_no_mount_and_nothing_said() -> None:
    plan = plan_workdir(cwd=None, **FACTS)
    assert (plan.host_root, plan.cwd, plan.note) == (None, "/home/work", "")


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"enabled": False}, "c.ClusterProvisioner.mount_notebook_dir is off"),
        ({"refused": "agent a2 is not this machine's Docker engine"}, "agent a2 is not"),
        ({"root": None}, "no Jupyter server root"),
        ({"root_owner": 1001}, "c.ContainerHardening.work_uid = 1001"),
    ],
)
def test_unsafe_or_off_starts_in_home_and_says_why(changes: dict[str, object], said: str) -> None:
    plan = plan_workdir(cwd="/srv/lab/proj", **{**FACTS, **changes})  # type: ignore[arg-type]
    assert plan.host_root is None and plan.cwd == "/home/work"
    assert said in plan.note and "relative paths are in /home/work" in plan.note


def test_a_root_owned_root_is_mounted_read_only_and_the_note_says_so() -> None:
    """A server run as root (``make lab``) serves root's folder: work, never root,
    reads the notebook's neighbours there but writes nothing as another user."""
    plan = plan_workdir(cwd="/srv/lab/proj", **{**FACTS, "root_owner": 0})
    assert (plan.host_root, plan.cwd, plan.note) == (
        "/srv/lab",
        f"{MOUNT_POINT}/proj",
        READ_ONLY_NOTE,
    )
    assert "read-only" in READ_ONLY_NOTE
    assert "run the server as a user other than root" in READ_ONLY_NOTE
    assert read_only_root(0) and not read_only_root(1000) and not read_only_root(None)


def test_a_root_owned_folder_work_may_not_enter_is_not_mounted() -> None:
    """Mounted read-only, a folder only root may enter would fail the kernel's start
    (work cannot even start there): the kernel starts in /home/work, saying why."""
    closed = "/srv/lab/proj (mode 0700)"
    plan = plan_workdir(cwd="/srv/lab/proj", **{**FACTS, "root_owner": 0, "closed": closed})
    assert (plan.host_root, plan.cwd) == (None, "/home/work")
    assert plan.note == (
        "the notebook's folder is not mounted: its server's root folder belongs to root, "
        "and work (uid 1000) may not enter /srv/lab/proj (mode 0700); relative paths are "
        "in /home/work"
    )


def test_which_folder_work_may_not_enter_by_its_mode_bits() -> None:
    open_root = ("/srv/lab", 0, 0, 0o40755)
    assert closed_to([open_root, ("/srv/lab/p", 0, 0, 0o40711)], 1000) == ""
    assert closed_to([open_root, ("/srv/lab/p", 0, 0, 0o40750)], 1000) == ("/srv/lab/p (mode 0750)")
    assert closed_to([("/srv/lab", 0, 1000, 0o40750), ("/srv/lab/p", 0, 0, 0o40700)], 1000) == (
        "/srv/lab/p (mode 0700)"
    )  # the first is work's group's, the second root's alone
    assert closed_to([("/srv/lab", 1000, 1000, 0o40700)], 1000) == ""  # work's own
    assert closed_to([("/srv/lab", 1000, 1000, 0o40007)], 1000) == "/srv/lab (mode 0007)"
    assert closed_to([], 1000) == ""


def test_a_notebook_outside_the_root_is_not_mounted() -> None:
    plan = plan_workdir(cwd="/etc", **FACTS)
    assert plan.host_root is None and "outside the server's root folder" in plan.note


def test_a_running_session_maps_only_what_it_mounts() -> None:
    assert map_cwd("/srv/lab", "/srv/lab/p").cwd == f"{MOUNT_POINT}/p"
    assert "without the notebook's folder" in map_cwd(None, "/srv/lab/p").note
    assert "outside the folder this session mounts" in map_cwd("/srv/lab", "/home/u").note
    assert map_cwd(None, None).note == ""


def test_the_spec_keeps_the_folder_and_input_cannot_set_it() -> None:
    spec = LaunchSpec(image="i", workdir="/srv/lab")
    assert LaunchSpec.from_dict(spec.to_dict()).workdir == "/srv/lab"
    assert LaunchSpec.from_dict(LaunchSpec(image="i").to_dict()).workdir is None
    with pytest.raises(TypeError):
        LaunchSpec.create(image="i", workdir="/")  # type: ignore[call-arg]


def test_only_a_warm_set_made_for_the_notebooks_folder_serves_it() -> None:
    containers = tuple(c.with_(agent="local") for c in plan_containers("s", 1))
    session = Session("s", LaunchSpec(image="i"), SessionStatus.PREPARING, containers=containers)
    plain = shape_of(session)
    assert plain is not None
    mounted = shape_of(session.with_(spec=LaunchSpec(image="i", workdir="/srv/lab")))
    assert mounted is not None and mounted.workdir == "/srv/lab" and mounted.key != plain.key


def test_an_agent_is_this_machine_only_over_a_unix_socket(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DOCKER_HOST", raising=False)
    assert AgentConfig().is_this_machine
    assert AgentConfig(url="unix:///run/docker.sock").is_this_machine
    assert not AgentConfig(url="tcp://10.0.0.2:2376").is_this_machine
    assert not AgentConfig(url="ssh://u@h").is_this_machine
    monkeypatch.setenv("DOCKER_HOST", "tcp://10.0.0.2:2376")
    assert not AgentConfig().is_this_machine


def test_the_engine_mounts_only_an_existing_absolute_directory(tmp_path: Path) -> None:
    """Read-write, or read-only exactly when root owns the folder."""
    owned = tmp_path / "owned"
    owned.mkdir()
    if os.getuid() == 0:
        os.chown(owned, 1000, 1000)
    assert notebook_mount(None) == ()
    assert notebook_mount(str(owned)) == (BindMount(str(owned), MOUNT_POINT, False),)
    # root's everywhere: read-only, and without what is mounted below it (/proc, /run…)
    assert notebook_mount("/") == (BindMount("/", MOUNT_POINT, True, recursive=False),)
    config = mount_config(notebook_mount("/")[0])
    assert config["ReadOnly"] and config["BindOptions"] == {"NonRecursive": True}
    assert "BindOptions" not in mount_config(notebook_mount(str(owned))[0])
    for bad in (str(tmp_path / "gone"), "relative"):
        with pytest.raises(InvalidRequest, match="mount_notebook_dir"):
            notebook_mount(bad)


class _Server:
    def __init__(self, root: Path) -> None:
        self.root_dir = str(root)


class _KernelManager:
    def __init__(self, root: Path) -> None:
        self.parent = _Server(root)


class _LocalEngine:
    def __init__(self, refused: str, work_uid: int) -> None:
        self.facts = (refused, work_uid)

    def host_folder_mount(self) -> tuple[str, int]:
        return self.facts


def test_the_provisioner_gathers_the_facts(tmp_path: Path) -> None:
    """The server's root from the kernel manager's parent, symlinks resolved, its
    owner; no mount through the shared service or a remote agent."""
    (tmp_path / "real" / "proj").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    chooser = NotebookDir()
    chooser.parent = _KernelManager(tmp_path / "link")  # type: ignore[attr-defined]
    if os.getuid() == 0:  # a root-owned folder is mounted read-only: give it an owner
        os.chown(tmp_path / "real", 4242, 4242)
    uid = (tmp_path / "real").stat().st_uid
    cwd = {"cwd": str(tmp_path / "link" / "proj")}
    plan = chooser.new_session_workdir(_LocalEngine("", uid), cwd)
    assert (plan.host_root, plan.cwd) == (str(tmp_path / "real"), f"{MOUNT_POINT}/proj")
    other = chooser.new_session_workdir(_LocalEngine("", uid + 1), cwd)
    assert other.host_root is None and f"work_uid = {uid}" in other.note
    remote = chooser.new_session_workdir(_LocalEngine("agent b is not this machine's", uid), cwd)
    assert remote.host_root is None and "agent b" in remote.note
    team = chooser.new_session_workdir(object(), cwd)
    assert team.host_root is None and "shared service" in team.note
    assert chooser.new_session_workdir(_LocalEngine("", uid), {}).note == ""
    running = Session("s", LaunchSpec(image="i", workdir=plan.host_root))
    assert chooser.running_session_workdir(_LocalEngine("", uid), running, cwd).cwd == plan.cwd
    assert "shared service" in chooser.running_session_workdir(object(), running, cwd).note


def test_the_notebooks_folder_may_be_a_path_object(tmp_path: Path) -> None:
    """``jupyter execute`` gives the notebook's folder as a ``pathlib.Path``: it was
    taken for no folder at all, and the kernel started in /home/work silently."""
    (tmp_path / "proj").mkdir()
    if os.getuid() == 0:  # a root-owned folder is mounted read-only: give it an owner
        os.chown(tmp_path / "proj", 4242, 4242)
    uid = (tmp_path / "proj").stat().st_uid
    as_text = NotebookDir().new_session_workdir(
        _LocalEngine("", uid), {"cwd": str(tmp_path / "proj")}
    )
    as_path = NotebookDir().new_session_workdir(_LocalEngine("", uid), {"cwd": tmp_path / "proj"})
    assert as_path == as_text == Workdir(str(tmp_path / "proj"), MOUNT_POINT)


def test_the_provisioner_finds_a_folder_on_the_way_that_work_may_not_enter(
    tmp_path: Path,
) -> None:
    if os.getuid() != 0:
        if os.environ.get("CI"):  # CI runs as root: never hide this test there
            pytest.fail("CI must run this test as root")
        pytest.skip("needs root, to own the folders")
    root = tmp_path / "lab"
    (root / "proj" / "sub").mkdir(parents=True)
    chooser = NotebookDir()
    chooser.parent = _KernelManager(root)  # type: ignore[attr-defined]
    for path in (root, root / "proj", root / "proj" / "sub"):
        path.chmod(0o755)
    cwd = {"cwd": str(root / "proj" / "sub")}
    readable = chooser.new_session_workdir(_LocalEngine("", 1000), cwd)
    assert (readable.cwd, readable.note) == (f"{MOUNT_POINT}/proj/sub", READ_ONLY_NOTE)
    (root / "proj").chmod(0o700)
    closed = chooser.new_session_workdir(_LocalEngine("", 1000), cwd)
    assert (closed.host_root, closed.cwd) == (None, "/home/work")
    assert f"may not enter {root / 'proj'} (mode 0700)" in closed.note, closed.note


def test_a_notebook_in_a_mounted_data_folder_starts_there_unless_the_root_is_mounted() -> None:
    folders = {"data": "/srv/folders/data", "models": "/srv/folders/models"}
    refused = plan_workdir(cwd="/srv/folders/data/run1", **{**FACTS, "enabled": False})
    assert in_data_folder(refused, "/srv/folders/data/run1", folders) == Workdir(
        None, "/home/work/data/run1"
    )
    at_top = in_data_folder(refused, "/srv/folders/models", folders)
    assert (at_top.cwd, at_top.note) == ("/home/work/models", "")
    elsewhere = in_data_folder(refused, "/srv/other", folders)
    assert elsewhere == refused and elsewhere.note
    mounted = plan_workdir(cwd="/srv/lab/p", **FACTS)
    assert in_data_folder(mounted, "/srv/lab/p", {"lab": "/srv/lab"}) == mounted


def test_the_notebook_is_named_where_main1_has_it_and_only_there() -> None:
    """JPY_SESSION_NAME (jupyter_server's, a path on the server) becomes the notebook's
    path in main1 when the kernel starts in its folder; else it is not passed on."""
    server = "/srv/lab/proj/analysis.ipynb"
    mounted = map_cwd("/srv/lab", "/srv/lab/proj")
    assert notebook_in_main1(mounted, server) == "/mnt/lab/proj/analysis.ipynb"
    at_root = map_cwd("/srv/lab", "/srv/lab")
    assert notebook_in_main1(at_root, "/srv/lab/a.ipynb") == "/mnt/lab/a.ipynb"
    outside = map_cwd("/srv/lab", "/elsewhere")
    assert outside.cwd == "/home/work" and notebook_in_main1(outside, server) is None
    assert notebook_in_main1(map_cwd(None, "/srv/lab/proj"), server) is None
    assert notebook_in_main1(mounted, None) is None and notebook_in_main1(mounted, "") is None
