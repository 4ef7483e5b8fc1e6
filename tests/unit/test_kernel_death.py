"""Why a cluster kernel ended by itself (provisioning/kernel_death.py): the kernel's
own lines of main1's log after its start mark, without sshd's and the engine's, and
the note that the provisioner logs and ends the session with."""

from __future__ import annotations

from jupyter_cluster.provisioning.kernel_death import (
    INSTALL_IPYKERNEL,
    SHOWN,
    describe,
    kernel_lines,
    start_mark,
)

KID = "1f1c2179-913e-407d-ba80-5efbe8d4ef75"


def test_the_kernels_lines_are_those_after_its_last_start_without_sshds() -> None:
    log = [
        "sshd: Server listening on 0.0.0.0 port 2200.\n",
        "jupyter-cluster: ready\n",
        start_mark(KID) + "\n",
        "an earlier start of the same kernel\n",
        start_mark("another-kernel") + "\n",
        "the other kernel's line\n",
        start_mark(KID) + "\n",
        "Traceback (most recent call last):\r\n",
        "sshd: Accepted publickey for work from 172.23.0.1 port 52806 ssh2\n",
        "\n",
        "ImportError: no module\n",
        "jupyter-cluster: kernel interpreter ready\n",
    ]
    assert kernel_lines(log, KID) == [
        "Traceback (most recent call last):",
        "ImportError: no module",
    ]
    assert kernel_lines(log, "never-started") is None
    assert kernel_lines([start_mark(KID)], KID) == []


def test_the_note_gives_the_code_the_last_lines_and_what_to_do() -> None:
    lines = ["/usr/bin/python3: No module named ipykernel_launcher"]
    note = describe(1, lines)
    assert note.startswith("the kernel exited with code 1; its last output in main1: /usr/bin")
    assert note.endswith(INSTALL_IPYKERNEL)
    many = [f"line {i}" for i in range(SHOWN + 5)]
    assert describe(1, many).split("main1: ", 1)[1] == " | ".join(many[-SHOWN:])
    assert describe(137, ["\x1b[31mKilled\x1b[0m"]) == (
        "the kernel was ended by a signal (exit code 137); its last output in main1: Killed"
    )
    assert describe(-1, None).startswith("the kernel ended (its exit code is not known); see")
    for lines_found in (None, []):
        assert describe(1, lines_found) == (
            "the kernel exited with code 1; see `jupyter cluster logs SESSION main1`"
        )
