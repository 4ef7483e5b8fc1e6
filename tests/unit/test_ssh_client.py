"""The ssh client files of ``jupyter cluster ssh``/``port-forward``, without SSH."""

from __future__ import annotations

import shlex

import pytest

from jupyter_cluster.core.access import Access
from jupyter_cluster.core.naming import hosts
from jupyter_cluster.core.ssh_client import (
    check_host,
    client_files,
    forward_argv,
    parse_forward,
    split_target,
    ssh_argv,
)
from jupyter_cluster.errors import InvalidRequest

KEYS = {
    "user": "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----",
    "user.pub": "ssh-ed25519 AAAAuser",
    "host:main1.pub": "ssh-ed25519 AAAAmain\n",
    "host:sub1.pub": "ssh-ed25519 AAAAsub1",
    "host:sub2.pub": "ssh-ed25519 AAAAsub2",
}
ACCESS = Access("10.0.0.5", 32001, KEYS)


def _blocks(config: str) -> dict[str, list[str]]:
    blocks: dict[str, list[str]] = {}
    current: list[str] = []
    for line in config.splitlines():
        if line.startswith("Host "):
            current = blocks.setdefault(line.split()[1], [])
        else:
            current.append(line.strip())
    return blocks


def test_main1_is_reached_directly_and_the_others_through_it_with_strict_keys() -> None:
    files = client_files(ACCESS, "/tmp/my dir/key", "/tmp/my dir/known_hosts")
    blocks = _blocks(files.config)
    assert list(blocks) == ["main1", "sub1", "sub2"]
    assert {"HostName 10.0.0.5", "Port 32001", "HostKeyAlias main1"} <= set(blocks["main1"])
    assert not any(line.startswith("ProxyJump") for line in blocks["main1"])
    assert {"HostName sub2", "Port 2200", "ProxyJump main1", "HostKeyAlias sub2"} <= set(
        blocks["sub2"]
    )
    for lines in blocks.values():
        assert {
            "User work",
            'IdentityFile "/tmp/my dir/key"',  # quoted: the path has a space
            "IdentitiesOnly yes",
            'UserKnownHostsFile "/tmp/my dir/known_hosts"',
            "GlobalKnownHostsFile /dev/null",
            "StrictHostKeyChecking yes",
            "BatchMode yes",
        } <= set(lines)
    assert files.known_hosts == (
        "main1 ssh-ed25519 AAAAmain\nsub1 ssh-ed25519 AAAAsub1\nsub2 ssh-ed25519 AAAAsub2\n"
    )
    assert files.key.endswith("-----END OPENSSH PRIVATE KEY-----\n")


def test_a_session_without_keys_is_refused_clearly() -> None:
    with pytest.raises(InvalidRequest, match="no SSH keys yet"):
        client_files(Access("10.0.0.5", 1, {"user.pub": "x"}), "k", "kh")


def test_host_and_command_are_told_apart() -> None:
    assert split_target([]) == ("main1", [])
    assert split_target(["sub2"]) == ("sub2", [])
    assert split_target(["hostname"]) == ("main1", ["hostname"])  # `ssh S -- hostname`
    assert split_target(["sub1", "--", "ls", "-l"]) == ("sub1", ["ls", "-l"])
    assert split_target(["sub1", "ls"]) == ("sub1", ["ls"])
    # A word before -- is the host even when mistyped: refused as unknown, not run.
    assert split_target(["mian1", "--", "ls"]) == ("mian1", ["ls"])
    assert split_target(["sh", "-c", "a -- b"]) == ("main1", ["sh", "-c", "a -- b"])
    assert check_host(ACCESS, "sub2") == "sub2"
    with pytest.raises(InvalidRequest, match=r"no container 'sub3'.*main1, sub1, sub2"):
        check_host(ACCESS, "sub3")
    eleven = {f"host:{h}.pub": "k" for h in hosts(11)}
    with pytest.raises(InvalidRequest, match=r"containers: main1, sub1, sub2, .*, sub9, sub10$"):
        check_host(Access("10.0.0.5", 1, eleven), "sub11")  # in order, not sub1, sub10, sub2


def test_commands_keep_their_words_and_forwards_stay_on_loopback() -> None:
    argv = ssh_argv("/c", "sub1", ["echo", "a b", "$HOME"])
    assert argv[:5] == ["ssh", "-F", "/c", "--", "sub1"]
    assert shlex.split(argv[5]) == ["echo", "a b", "$HOME"]
    assert ssh_argv("/c", "main1", []) == ["ssh", "-F", "/c", "--", "main1"]
    one = ssh_argv("/c", "main1", ["nvidia-smi | head -3"])  # a line, as OpenSSH takes one
    assert one == ["ssh", "-F", "/c", "--", "main1", "nvidia-smi | head -3"]
    assert parse_forward("6006") == (6006, 6006)
    assert parse_forward("6006:16006") == (6006, 16006)
    assert "127.0.0.1:16006:127.0.0.1:6006" in forward_argv("/c", 6006, 16006)
    for bad, field in (("x", "port"), ("0", "port"), ("80:70000", "local port")):
        with pytest.raises(InvalidRequest) as caught:
            parse_forward(bad)
        assert caught.value.field == field
