"""``%cluster logs`` and ``%cluster exec`` inside a cluster kernel name their host as
the CLI does: main1 when none is given, a word before ``--`` always the host.

``jupyter_cluster/runtime/incluster.py`` is copied alone into every container, so it
cannot import the package's ``core.ssh_client.split_target``: it keeps its own, and
this test holds the two to the same answers. Before, the in-kernel magic required
HOST (``%cluster logs`` was an error) while ``jupyter cluster logs S`` and
``%cluster logs S`` in a local kernel read main1's.
"""

from __future__ import annotations

import pytest

from jupyter_cluster.core import ssh_client
from jupyter_cluster.core.naming import MAIN_HOST
from jupyter_cluster.runtime import incluster

WORDS = [
    ["--", "sh", "-c", "x"],
    ["hostname"],
    ["sub1", "--", "env"],
    ["sub12", "env"],
    ["mian1", "--", "hostname"],
    ["main1", "--", "sh", "-c", "a -- b"],
    ["sub1"],
    ["sub1", "--"],
    [],
    ["ls", "--", "-l"],
]


@pytest.mark.parametrize("words", WORDS)
def test_the_in_kernel_split_is_the_clis(words: list[str]) -> None:
    assert incluster.split_target(list(words)) == ssh_client.split_target(words)


def test_its_host_names_are_the_packages() -> None:
    assert incluster.MAIN_HOST == MAIN_HOST
    assert incluster.HOST_RE.pattern == ssh_client.HOST_RE.pattern


@pytest.mark.parametrize(
    ("line", "host"),
    [(["logs"], "main1"), (["logs", "--tail", "3"], "main1"), (["logs", "sub2", "-f"], "sub2")],
)
def test_logs_reads_main1_without_a_host(line: list[str], host: str) -> None:
    assert incluster._parser().parse_args(line).host == host


@pytest.mark.parametrize(
    "line", [["exec"], ["exec", "sub1"], ["exec", "sub1", "--"], ["exec", "sub1", "--", " "]]
)
def test_exec_without_a_command_says_what_to_give(
    line: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BACKENDAI_CLUSTER_HOSTS", "main1,sub1")
    with pytest.raises(incluster.MagicError, match=r"give a command: %cluster exec \[HOST\]"):
        incluster.run(line)


@pytest.mark.parametrize(
    "words", [["hostname"], ["ls / | wc -l"], ["ls", "-l", "my file"], ["sh", "-c", "x"]]
)
def test_one_word_is_a_shell_command_line_in_the_kernel_as_in_the_cli(words: list[str]) -> None:
    assert incluster.shell_words(list(words)) == ssh_client.shell_words(words)
