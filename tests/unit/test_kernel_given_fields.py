"""A cluster kernel started by a client of the shared service asks only for the options
its kernelspec or a config file set: the service's launch defaults fill in the rest
(the provisioner's own, 1 CPU and 1g, would pass over a stricter resource policy)."""

from __future__ import annotations

from traitlets.config import Config

from jupyter_cluster.provisioning.provisioner import ClusterProvisioner


def test_only_the_options_set_are_asked_for() -> None:
    config = Config()
    config.ClusterProvisioner.size = 2
    provisioner = ClusterProvisioner(kernel_id="k", kernel_spec=None, config=config, cpu="0.5")
    given = provisioner.given_fields()
    assert {k: v for k, v in given.items() if v is not None} == {
        "size": 2,
        "cpu": "0.5",
        "mounts": [],
    }
    # a local engine still gets every option (its own defaults are the kernel's)
    assert provisioner.launch_fields()["mem"] == "1g"


def test_a_kernelspec_setting_nothing_asks_for_nothing() -> None:
    given = ClusterProvisioner(kernel_id="k", kernel_spec=None).given_fields()
    assert {k: v for k, v in given.items() if v is not None} == {"mounts": []}
