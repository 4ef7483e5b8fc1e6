"""Private temporary directories (jupyter_cluster.private_dirs): a directory whose users
all died (SIGKILL, a crash) is removed when this user next makes one; a directory
someone still holds, another user's, a shared one or a link to one never is."""

from __future__ import annotations

import fcntl
import os
import pwd
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_cluster import private_dirs

#: A process that makes a directory, prints its path and waits to be killed.
HOLDER = (
    "import sys, time\n"
    "from jupyter_cluster import private_dirs\n"
    "print(private_dirs.make('test-').path, flush=True)\n"
    "time.sleep(120)\n"
)


@pytest.fixture
def tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The temporary directory the module sees, this test's own."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


@pytest.fixture
def holder(tmp: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """Another process holding a directory it made; killed at the end."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(tmp)},
    )
    try:
        assert proc.stdout is not None
        yield proc, proc.stdout.readline().strip()
    finally:
        proc.kill()
        proc.wait()


def unheld(path: Path) -> Path:
    """A directory like the module's, whose mark nobody holds (its user died)."""
    path.mkdir(mode=0o700)
    (path / private_dirs.MARK).touch(mode=0o600)
    (path / "key").write_text("secret")
    return path


def held_elsewhere(path: str) -> bool:
    """Whether some open file holds the mark of ``path`` (an exclusive lock fails)."""
    fd = os.open(os.path.join(path, private_dirs.MARK), os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def test_a_made_directory_is_private_held_and_removed_with_its_files(tmp: Path) -> None:
    made = private_dirs.make("ssh-")
    info = os.stat(made.path)
    assert os.path.dirname(made.path) == str(tmp)
    assert os.path.basename(made.path).startswith("jupyter-cluster-ssh-")
    assert stat.S_IMODE(info.st_mode) == 0o700 and info.st_uid == os.getuid()
    assert made.held and held_elsewhere(made.path)
    Path(made.path, "key").write_text("secret")
    made.remove()
    assert not os.path.exists(made.path) and not made.held
    made.remove()  # a second call does nothing


def test_a_killed_process_directory_goes_at_the_next_make_and_a_live_one_stays(
    tmp: Path, holder: tuple[subprocess.Popen[str], str]
) -> None:
    proc, path = holder
    assert os.path.isdir(path)
    mine = private_dirs.make()  # sweeps first: the holder is alive
    assert os.path.isdir(path) and held_elsewhere(path)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert os.path.isdir(path)  # nothing removes it at its death...
    again = private_dirs.make()  # ...until this user makes another
    assert not os.path.exists(path)
    assert os.path.isdir(mine.path) and os.path.isdir(again.path)  # held here
    assert sorted(os.listdir(tmp)) == sorted(os.path.basename(d.path) for d in (mine, again))
    mine.remove()
    again.remove()


def test_a_released_directory_is_left_in_place_for_its_other_holder(tmp: Path) -> None:
    first = private_dirs.make()
    second = private_dirs.hold(first.path)  # a restarted kernel's tunnel taking it up
    assert second is not None and second.path == first.path
    first.release()
    assert private_dirs.sweep() == [] and held_elsewhere(first.path)
    second.release()
    assert private_dirs.sweep() == [first.path] and not os.path.exists(first.path)


def test_only_this_users_private_marked_directories_are_swept(tmp: Path) -> None:
    dead = unheld(tmp / "jupyter-cluster-dead")
    shared = unheld(tmp / "jupyter-cluster-shared")
    shared.chmod(0o755)
    unmarked = tmp / "jupyter-cluster-unmarked"  # not made by this module
    unmarked.mkdir(mode=0o700)
    other_name = unheld(tmp / "someone-else")
    target = unheld(tmp / "target")
    (tmp / "jupyter-cluster-link").symlink_to(target)
    assert private_dirs.sweep() == [str(dead)]
    assert not dead.exists()
    for kept in (shared, unmarked, other_name, target, tmp / "jupyter-cluster-link"):
        assert kept.exists(), kept
    assert (target / "key").read_text() == "secret"


#: Run as ``nobody`` in a shared temporary directory (``$1``), aiming at ``$2``, a
#: private directory of the test's user: a link named like ours to it, a directory of
#: ours' name that anyone may enter, and one that is nobody's alone, both marked.
PLANT = (
    'cd "$1" && ln -s "$2" jupyter-cluster-link && '
    "mkdir -m 0777 jupyter-cluster-squat && touch jupyter-cluster-squat/.held && "
    "mkdir -m 0700 jupyter-cluster-theirs && touch jupyter-cluster-theirs/.held && "
    "echo planted"
)


def test_another_user_can_make_the_sweep_remove_nothing_and_a_holder_take_up_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Another Unix user of this machine plants names like ours in the shared
    temporary directory: a sweep removes none of them (nor what a link points to),
    and a re-attaching kernel's tunnel whose directory name they took refuses it."""
    if os.geteuid() != 0:
        if os.environ.get("CI"):  # CI runs as root: never hide this test there
            pytest.fail("CI must run this test as root")
        pytest.skip("needs root, to run commands as another user")
    arena = Path(tempfile.mkdtemp(prefix="private-dirs-test-", dir="/tmp"))
    try:
        arena.chmod(0o1777)  # shared and sticky, as /tmp is
        monkeypatch.setattr(tempfile, "tempdir", str(arena))
        target = unheld(arena / "victim")
        nobody = pwd.getpwnam("nobody")
        ids = (f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups")
        planted = subprocess.run(
            ["setpriv", *ids, "--", "sh", "-c", PLANT, "plant", str(arena), str(target)],
            capture_output=True,
            text=True,
            timeout=30,
            cwd="/",
        )
        assert planted.stdout == "planted\n", planted.stderr
        theirs = arena / "jupyter-cluster-theirs"
        assert theirs.stat().st_uid == nobody.pw_uid
        assert private_dirs.sweep() == []
        assert (target / "key").read_text() == "secret"
        for name in ("jupyter-cluster-link", "jupyter-cluster-squat", "jupyter-cluster-theirs"):
            assert os.path.lexists(arena / name), name
        assert private_dirs.hold(str(arena / "jupyter-cluster-squat")) is None
        assert private_dirs.hold(str(theirs)) is None
        assert private_dirs.hold(str(arena / "jupyter-cluster-link")) is None
    finally:
        shutil.rmtree(arena)


def test_hold_makes_again_a_directory_swept_while_it_took_it_up(
    tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server re-attaching a dead server's kernel takes up its sockets' directory
    while another process's sweep finds it unheld and removes it: the server must end
    up holding a directory at that path, not a mark in a removed one."""
    path = str(unheld(tmp / "jupyter-cluster-reused"))
    real_flock = fcntl.flock
    swept: list[list[str]] = []

    def sweep_first(fd: int, operation: int) -> None:
        if operation == fcntl.LOCK_SH and not swept:
            swept.append(private_dirs.sweep())  # between opening the mark and locking it
        real_flock(fd, operation)

    monkeypatch.setattr(private_dirs.fcntl, "flock", sweep_first)
    kept = private_dirs.hold(path)
    monkeypatch.setattr(private_dirs.fcntl, "flock", real_flock)
    assert swept == [[path]]
    assert kept is not None and kept.path == path
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o700
    assert not os.path.exists(os.path.join(path, "key"))  # a fresh directory
    assert held_elsewhere(path) and private_dirs.sweep() == []
    kept.remove()


def test_hold_refuses_a_directory_others_can_enter(tmp: Path) -> None:
    shared = tmp / "shared"
    shared.mkdir()
    shared.chmod(0o755)
    assert private_dirs.hold(str(shared)) is None
    (tmp / "link").symlink_to(tmp / "private")
    (tmp / "private").mkdir(mode=0o700)
    assert private_dirs.hold(str(tmp / "link")) is None
