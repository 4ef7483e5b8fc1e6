"""Who holds a uid on the host, and the files that give work its uid (X3)."""

from __future__ import annotations

import pwd

import pytest

from jupyter_cluster.core import naming
from jupyter_cluster.core.uids import (
    TEAM_WORK_UID,
    SubordinateRange,
    check_work_uid,
    parse_subordinate,
    uid_holder,
)
from jupyter_cluster.engine.hardening import ContainerHardening
from jupyter_cluster.engine.launch.keys import generate_session_keys
from jupyter_cluster.errors import UnsafeSetting
from jupyter_cluster.runtime.files import container_files
from tests.unit.support import new_session

SUBUID = "alice:100000:65536\n# comment\nbroken line\nbob:165536:65536\n"


def test_subordinate_ranges_are_parsed_and_bad_lines_skipped() -> None:
    assert parse_subordinate(SUBUID) == [
        SubordinateRange("alice", 100000, 65536),
        SubordinateRange("bob", 165536, 65536),
    ]


def test_an_account_or_a_subordinate_range_holds_a_uid() -> None:
    ranges = [("/etc/subuid", r) for r in parse_subordinate(SUBUID)]
    accounts = {1000: "cloud", 1001: "group alice"}
    assert uid_holder(1000, accounts, ranges) == "the host account 'cloud'"
    assert "'bob'" in (uid_holder(200000, accounts, ranges) or "")
    assert "/etc/subuid: 165536-231071" in (uid_holder(231071, accounts, ranges) or "")
    assert uid_holder(231072, accounts, ranges) is None
    assert uid_holder(TEAM_WORK_UID, accounts, ranges) is None


def test_a_held_uid_is_refused_with_what_to_do() -> None:
    with pytest.raises(ValueError, match="set work_uid to a uid no host account"):
        check_work_uid(1000, {1000: "cloud"})
    with pytest.raises(ValueError, match="between 1 and"):
        check_work_uid(0, {})
    check_work_uid(TEAM_WORK_UID, {1000: "cloud"})


def test_the_hardening_checks_the_real_account_database() -> None:
    nobody = pwd.getpwnam("nobody").pw_uid
    ContainerHardening(work_uid=nobody).check_reserved_uid()  # not reserved: no check
    with pytest.raises(UnsafeSetting, match="'nobody'"):
        ContainerHardening(work_uid=nobody, reserved_work_uid=True).check_reserved_uid()
    ContainerHardening(work_uid=TEAM_WORK_UID, reserved_work_uid=True).check_reserved_uid()


def test_files_give_work_its_uid_and_keep_the_accepted_keys_roots() -> None:
    session = new_session(2)
    keys = generate_session_keys(session.id, session.hosts)
    files = {f.path: f for f in container_files(session, session.containers[1], keys, 4242)}
    assert files[naming.WORK_UID_FILE].content == b"4242\n"
    accepted = files[f"{naming.RUNTIME_DIR}/authorized_keys"]
    assert (accepted.uid, accepted.mode) == (0, 0o644)
    assert accepted.content.decode().strip() == keys["user.pub"]
    assert f"{naming.WORK_HOME}/.ssh/authorized_keys" not in files
    private = files[f"{naming.WORK_HOME}/.ssh/id_cluster"]
    assert (private.uid, private.gid, private.mode) == (4242, 4242, 0o600)
