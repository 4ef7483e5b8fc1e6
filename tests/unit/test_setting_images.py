"""Settings that name images refuse a name Docker would refuse, as the configuration
is read (:mod:`jupyter_cluster.setting_images`): a misspelt default image was taken,
and then every launch without an image was refused. Every image setting of the
package is walked, so one added later without the check fails here."""

from __future__ import annotations

from typing import Any

import pytest
from traitlets import List, TraitError, Unicode
from traitlets.config import Config

from jupyter_cluster.config import LaunchSettings
from jupyter_cluster.engine.gpu_detection import GpuDetection
from jupyter_cluster.engine.hardening import ContainerHardening
from jupyter_cluster.engine.manager import ClusterManager
from tests.unit.test_setting_bounds import unchecked_settings

#: Image settings checked elsewhere, and where.
CHECKED_ELSEWHERE = {
    # a kernelspec's launch option, checked with the launch's (core.launch_options)
    ("ClusterProvisioner", "image"),
}


def is_image_setting(name: str, trait: Any) -> bool:
    return name.endswith(("image", "images")) and isinstance(trait, (Unicode, List))


def test_every_image_setting_is_checked() -> None:
    seen, unchecked = unchecked_settings(is_image_setting, CHECKED_ELSEWHERE)
    assert seen >= 6  # ClusterManager's, its settings', the launch's, egress, GPU probe
    assert unchecked == []


@pytest.mark.parametrize(
    ("cls", "name", "value", "said"),
    [
        (ClusterManager, "default_image", "Jupyter-Cluster/Kernel", "image names are lower case"),
        (LaunchSettings, "allowed_images", ["python:3", "python:"], "'' after ':' is no tag"),
        (ContainerHardening, "egress_image", "a b", "'a b' is no name part"),
        (GpuDetection, "image", "cuda@sha256:1", "after '@' is no digest"),
    ],
)
def test_a_wrong_image_name_is_refused_naming_the_setting(
    cls: type, name: str, value: Any, said: str, tmp_path: Any
) -> None:
    extra = {"db_path": str(tmp_path / "c.db")} if cls is ClusterManager else {}
    with pytest.raises(TraitError) as caught:
        cls(config=Config({cls.__name__: {name: value}}), **extra)
    message = str(caught.value)
    assert message.startswith(f"{cls.__name__}.{name}: "), message
    assert said in message, message


def test_right_names_and_the_empty_default_are_kept() -> None:
    assert GpuDetection(config=Config({"GpuDetection": {"image": ""}})).image == ""
    launch = LaunchSettings(allowed_images=["python:3", "registry.example.com:5000/t/x:1"])
    assert launch.allowed_images == ["python:3", "registry.example.com:5000/t/x:1"]
    with pytest.raises(TraitError, match=r"ContainerHardening\.egress_image: '' is no image"):
        ContainerHardening(egress_image="")
