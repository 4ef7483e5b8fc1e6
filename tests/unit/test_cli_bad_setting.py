"""A wrongly typed setting in ``jupyter_cluster_config.py`` (a str where a number
goes): every command ended in traitlets' traceback. It now ends as any bad input
does: exit code 2 and one line naming the setting and where to fix it. A Jupyter
directory that cannot be used (``JUPYTER_DATA_DIR`` naming a file) ended in a
traceback too; it is now one line naming the place, exit code 1."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def cli(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jupyter_cluster.cli", *argv],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("argv", [["ls"], ["agents"], ["launch", "--size", "1"]])
def test_a_wrong_setting_is_one_line_naming_it(tmp_path: Path, argv: list[str]) -> None:
    config = tmp_path / "config"
    config.mkdir()
    (config / "jupyter_cluster_config.py").write_text('c.ClusterManager.pending_timeout = "soon"\n')
    env = {
        "JUPYTER_CONFIG_DIR": str(config),
        "JUPYTER_DATA_DIR": str(tmp_path / "data"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
    }
    done = cli(argv, env)
    assert done.returncode == 2, done
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        "jupyter cluster: error: a setting in the configuration is wrong: The "
        "'pending_timeout' trait of a ClusterManager instance expected a float, not the "
        "str 'soon'; fix it in jupyter_cluster_config.py (`jupyter --paths` lists where "
        "it is read from)"
    ], done.stderr


@pytest.mark.parametrize("argv", [["ls"], ["launch", "--size", "1"], ["folder", "ls"]])
def test_a_data_dir_that_cannot_be_used_is_one_line_naming_it(
    tmp_path: Path, argv: list[str]
) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("")
    env = {
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_DATA_DIR": str(a_file),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
    }
    done = cli(argv, env)
    assert done.returncode == 1, done
    assert done.stderr.splitlines() == [
        f"jupyter cluster: cannot use {a_file}/cluster: Not a directory"
    ], done.stderr
