"""The kernel's command and environment in main1 (core/kernel_command.py): what a
local ipykernel kernel gets from ``ipykernel install`` and jupyter_client, ours too."""

from __future__ import annotations

import pytest

from jupyter_cluster.core.kernel_command import (
    FROZEN_OFF,
    PARENT_ENV,
    WARM_KERNEL_WORDS,
    kernel_argv,
    kernel_env,
)
from jupyter_cluster.provisioning.kernelspec import KERNEL_ARGV

EXT = "--ext=jupyter_cluster"


def test_the_default_kernelspec_runs_with_frozen_modules_off_and_the_magic() -> None:
    argv = kernel_argv(["python3", "-m", "ipykernel_launcher", "-f", "/run/k.json"])
    assert argv == ["python3", FROZEN_OFF, "-m", "ipykernel_launcher", "-f", "/run/k.json", EXT]


def test_the_warm_interpreter_stands_for_exactly_the_default_kernelspec() -> None:
    """The handoff compares the first four words with WARM_KERNEL_WORDS: the cluster
    kernelspec's own argv must give them, or no warm kernel would ever be handed over."""
    argv = kernel_argv([part.replace("{connection_file}", "/run/k.json") for part in KERNEL_ARGV])
    assert tuple(argv[:4]) == WARM_KERNEL_WORDS


@pytest.mark.parametrize(
    "cmd",
    [
        ["/usr/bin/python3.11", "-u", "-m", "ipykernel_launcher", "-f", "k.json"],
        ["python", "-m", "ipykernel_launcher", "-f", "k.json"],
    ],
)
def test_any_python_interpreter_gets_the_option_before_its_own(cmd: list[str]) -> None:
    argv = kernel_argv(cmd)
    assert argv[:2] == [cmd[0], FROZEN_OFF]
    assert argv[2:] == [*cmd[1:], EXT]


def test_a_kernelspec_that_sets_frozen_modules_itself_keeps_its_choice() -> None:
    cmd = ["python3", "-Xfrozen_modules=on", "-m", "ipykernel_launcher", "-f", "k.json"]
    assert kernel_argv(cmd) == [*cmd, EXT]


def test_a_wrapper_before_the_interpreter_is_left_as_given() -> None:
    """``conda run … python -m ipykernel_launcher``: an option after ``conda`` would
    break it; the magic is still loaded."""
    cmd = ["conda", "run", "-n", "ml", "python", "-m", "ipykernel_launcher", "-f", "k.json"]
    assert kernel_argv(cmd) == [*cmd, EXT]


def test_other_kernels_commands_are_left_alone() -> None:
    cmd = ["R", "--slave", "-e", "IRkernel::main()", "--args", "k.json"]
    assert kernel_argv(cmd) == cmd
    assert kernel_argv(["python3", "-m", "mykernel", "-f", "k.json"]) == [
        "python3",
        "-m",
        "mykernel",
        "-f",
        "k.json",
    ]


def test_the_environment_says_a_manager_launched_it_unless_the_kernelspec_says_else() -> None:
    env = kernel_env({"A": "1"}, "/opt/py")
    assert env == {"PYTHONPATH": "/opt/py", PARENT_ENV: "1", "A": "1"}
    assert kernel_env({PARENT_ENV: "7", "PYTHONPATH": "/x"}, "/opt/py") == {
        "PYTHONPATH": "/x",
        PARENT_ENV: "7",
    }
