"""A command run over SSH in team mode (the kernel, ``exec``) gets its environment
through stdin: the values (the kernel's HMAC key among them) are never on the
command line sshd hands to the shell, which every host user can read in /proc."""

from __future__ import annotations

import shlex
import subprocess

from jupyter_cluster.client.shell import command_line, env_script

SECRET = {"JC_CONNECTION": '{"key": "0123-secret"}', "ODD": "a b 'c' $d \\e\nf"}


def test_the_environment_is_not_on_the_command_line() -> None:
    line = command_line(["python3", "-m", "ipykernel_launcher"], SECRET)
    assert "secret" not in line and "JC_CONNECTION" not in line
    assert shlex.split(line)[-3:] == ["python3", "-m", "ipykernel_launcher"]


def test_the_shell_gets_every_value_exactly_from_stdin() -> None:
    argv = [
        "python3",
        "-c",
        "import os, json; print(json.dumps([os.environ['ODD'], os.environ['JC_CONNECTION']]))",
    ]
    line = command_line(argv, SECRET)
    done = subprocess.run(  # what sshd does with it: the login shell runs the line
        ["/bin/sh", "-c", line], input=env_script(SECRET), capture_output=True, check=True
    )
    assert done.stdout.decode().strip() == (
        '["a b \'c\' $d \\\\e\\nf", "{\\"key\\": \\"0123-secret\\"}"]'
    )


def test_without_environment_the_command_is_left_alone() -> None:
    assert command_line(["echo", "hi there"]) == "echo 'hi there'"
