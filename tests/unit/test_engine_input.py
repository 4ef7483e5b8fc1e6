"""What the notebook API hands the engine as it is typed, refused with InvalidRequest
naming what to give (before, Python's own TypeError, or a silent exit code 0):
``ClusterSession.launch(sizes=2)``, ``s.exec("main1", "")``,
``s.exec("main1", ["echo", 5])``. The engine runs on the fake agent here."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from jupyter_cluster.core.launch_spec import LAUNCH_FIELDS, LaunchSpec, check_fields
from jupyter_cluster.core.naming import DEFAULT_IMAGE
from jupyter_cluster.core.ssh_client import shell_words
from jupyter_cluster.engine.agents.fake import FakeAgent
from jupyter_cluster.errors import InvalidRequest
from tests.unit.test_log_archive import manager_with


def test_the_launch_fields_are_the_specs_keywords_but_the_sites() -> None:
    keywords = set(inspect.signature(LaunchSpec.create).parameters)
    assert set(LAUNCH_FIELDS) == keywords - {"max_size", "env_allowed"}
    check_fields(LAUNCH_FIELDS)


async def test_an_unknown_launch_field_is_refused_naming_it(tmp_path: Path) -> None:
    manager = manager_with(tmp_path, FakeAgent("local", ready_on_start=True))
    for wrong in ("sizes", "max_size", "env_allowed"):  # the site's two are not a user's
        with pytest.raises(InvalidRequest) as caught:
            manager.make_spec(**{wrong: 2})
        assert caught.value.field == wrong
        assert caught.value.message.startswith(f"{wrong}: unknown launch field; the fields")
        assert "size, mode, cpu" in caught.value.message
    assert manager.make_spec(size=2).size == 2


def test_a_blank_command_line_is_refused() -> None:
    for blank in ("", "  ", "\n"):
        with pytest.raises(InvalidRequest, match="give a command to run"):
            shell_words([blank])
    assert shell_words(["hostname"]) == ["sh", "-c", "hostname"]
    assert shell_words(["echo", ""]) == ["echo", ""]  # a program's empty argument is fine


async def test_a_command_word_that_is_no_text_is_refused(tmp_path: Path) -> None:
    agent = FakeAgent("local", ready_on_start=True)
    manager = manager_with(tmp_path, agent)
    session = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE))
    with pytest.raises(InvalidRequest) as caught:
        await manager.exec(session.id, "main1", ["echo", 5])  # type: ignore[list-item]
    assert caught.value.message == "cmd: give the command's words as text; word 2 is 5"
    assert not [call for call in agent.calls if call[0] == "exec"]
    await manager.exec(session.id, "main1", ["echo", "5"])
    assert [call[0] for call in agent.calls].count("exec") == 1
    await manager.terminate(session.id)
