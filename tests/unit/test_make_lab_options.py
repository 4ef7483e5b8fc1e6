"""The browser tests' Lab takes the options of the Makefile's ``lab`` target (the
README's first command), and installs the kernelspec it installs, from the Makefile
itself, so the two cannot drift apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lab import make_lab_kernelspec, make_lab_options


def test_the_real_makefile_gives_the_lab_the_adaptive_warm_pool() -> None:
    assert "--ClusterManager.warm_pool_adaptive=True" in make_lab_options()


def test_only_configuration_options_of_the_jupyter_lab_line_are_taken(tmp_path: Path) -> None:
    makefile = tmp_path / "Makefile"
    makefile.write_text(
        "setup:\n\tbash setup.sh --Other.thing=1\n\n"
        "lab: setup\n"
        "\t$(BIN)/jupyter-cluster kernelspec install c2 --size 2 --Spec.x=1 \\\n"
        "\t\t--sys-prefix\n"
        "\t$(BIN)/jupyter lab --ip=127.0.0.1 --no-browser \\\n"
        "\t\t--ClusterManager.warm_pool_adaptive=True --ServerApp.port=9 --debug\n"
        "\n"
        "lint:\n\truff check . --Lint.z=2\n"
    )
    assert make_lab_options(makefile) == [
        "--ClusterManager.warm_pool_adaptive=True",
        "--ServerApp.port=9",
    ]


@pytest.mark.parametrize(
    "text", ["setup:\n\ttrue\n", "lab:\n\t$(BIN)/jupyter-cluster kernelspec install c2\n"]
)
def test_a_makefile_without_its_lab_command_fails_loudly(tmp_path: Path, text: str) -> None:
    makefile = tmp_path / "Makefile"
    makefile.write_text(text)
    with pytest.raises(AssertionError, match="lab"):
        make_lab_options(makefile)


def test_the_real_makefile_installs_the_readmes_cluster2_kernelspec() -> None:
    words = make_lab_kernelspec()
    assert words[:3] == ["kernelspec", "install", "cluster2"]
    assert "--sys-prefix" in words


def test_the_kernelspec_command_is_read_as_the_shell_splits_it(tmp_path: Path) -> None:
    makefile = tmp_path / "Makefile"
    makefile.write_text(
        "lab: setup\n"
        '\t$(BIN)/jupyter-cluster kernelspec install c2 --display-name "Two (2 of them)" \\\n'
        "\t\t--size 2 --sys-prefix\n"
        "\t$(BIN)/jupyter lab --no-browser\n"
    )
    assert make_lab_kernelspec(makefile) == [
        "kernelspec",
        "install",
        "c2",
        "--display-name",
        "Two (2 of them)",
        "--size",
        "2",
        "--sys-prefix",
    ]
    makefile.write_text("lab: setup\n\t$(BIN)/jupyter lab --no-browser\n")
    with pytest.raises(AssertionError, match="installs no kernelspec"):
        make_lab_kernelspec(makefile)
