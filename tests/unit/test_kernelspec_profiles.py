"""``jupyter cluster kernelspec install NAME --profile P [flags]`` (issue 25 item 4): the
kernelspec holds the profile's fields with the flags given on top, resolved when it is
written and checked like ``launch --profile``; it names the profile it came from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jupyter_cluster.cli.main import main

SITE = {
    "pair": {"fields": {"size": 2, "cpu": 0.5, "mem": "512m", "env": {"A": "1"}}},
    "huge": {"description": "more than the limits", "fields": {"cpu": 4}},
    "named": {"fields": {"name": "fixed", "mem": "256m"}},
}


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Private Jupyter dirs whose config has the ``SITE`` profiles and a 2-CPU limit."""
    config = tmp_path / "config"
    config.mkdir()
    settings = {"ClusterApp": {"launch_profiles": SITE, "max_cpu": 2.0}}
    (config / "jupyter_cluster_config.json").write_text(json.dumps(settings))
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(config))
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    return tmp_path


def _install(site: Path, *argv: str) -> int:
    with pytest.raises(SystemExit) as done:
        main(["kernelspec", "install", *argv, "--prefix", str(site / "prefix")])
    return int(done.value.code or 0)


def _kernel_json(site: Path, name: str) -> dict[str, object]:
    path = site / "prefix" / "share" / "jupyter" / "kernels" / name / "kernel.json"
    return dict(json.loads(path.read_text()))


def test_the_kernelspec_holds_the_profiles_fields_with_the_flags_on_top(site: Path) -> None:
    assert _install(site, "kp", "--profile", "pair", "--mem", "1g") == 0
    spec = _kernel_json(site, "kp")
    assert spec["display_name"] == "Cluster: pair, 2 \u00d7 0.5 CPU, 1g"
    metadata = spec["metadata"]
    assert isinstance(metadata, dict) and metadata["cluster_profile"] == "pair"
    config = metadata["kernel_provisioner"]["config"]
    assert (config["size"], config["cpu"], config["mem"]) == (2, "0.5", "1g")  # the flag won
    assert config["env"] == ["A=1"] and "image" not in config  # the default image at start
    # without --profile: the flags and their defaults, no profile named
    assert _install(site, "plain", "--size", "3") == 0
    plain = _kernel_json(site, "plain")["metadata"]
    assert isinstance(plain, dict) and "cluster_profile" not in plain
    assert plain["kernel_provisioner"]["config"]["size"] == 3


def test_a_profile_field_a_kernelspec_cannot_keep_is_left_out_with_a_note(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _install(site, "kn", "--profile", "named") == 0
    assert "not kept by a kernelspec: name" in capsys.readouterr().err
    config = _kernel_json(site, "kn")["metadata"]["kernel_provisioner"]["config"]  # type: ignore[index]
    assert config["mem"] == "256m" and "name" not in config


def test_an_unknown_profile_or_one_over_the_limits_installs_nothing(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _install(site, "k1", "--profile", "nope") == 2
    err = capsys.readouterr().err
    assert "no launch profile named 'nope'" in err and "pair" in err, err
    assert _install(site, "k2", "--profile", "huge") == 2
    err = capsys.readouterr().err
    assert "cpu: at most 2" in err, err
    assert _install(site, "k3", "--profile", "huge", "--cpu", "1") == 0  # the flag fits
    assert not (site / "prefix" / "share" / "jupyter" / "kernels" / "k1").exists()
    assert not (site / "prefix" / "share" / "jupyter" / "kernels" / "k2").exists()
