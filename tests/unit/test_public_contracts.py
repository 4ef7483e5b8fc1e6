"""Every public name and entry point of jupyter-cluster keeps working.

What users, installed kernelspecs and config files name must not move with the
code: the console script and ``python -m jupyter_cluster.cli``, the
``cluster-provisioner`` entry point, ``from jupyter_cluster import
ClusterSession``, ``jupyter_cluster.widgets.LaunchForm``, ``%load_ext
jupyter_cluster``, the server extension and its config file, every documented
config key, and the prebuilt JupyterLab extension. No Docker needed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

import jupyter_cluster

REPO = Path(__file__).resolve().parents[2]
#: Config keys users may have in their files (c.<Class>.<key>).
CONFIG_KEYS = {
    "ClusterManager": {
        "agents",
        "data_root",
        "db_path",
        "default_image",
        "max_size",
        "orphan_policy",
        "pending_poll_interval",
        "prepare_timeout",
    },
    "ClusterApp": {
        "allowed_images",
        "resource_groups",
        "max_cpu",
        "max_mem",
        "max_shm",
        "max_gpu",
        "max_sessions_per_user",
        "default_launch_options",
        "kernel_name",
        "kernel_display_name",
        "events_poll_interval",
        "reconcile_interval",
    },
    "ClusterProvisioner": {
        "image",
        "size",
        "mode",
        "cpu",
        "mem",
        "shm",
        "gpu",
        "mounts",
        "resource_group",
        "bootstrap",
        "launch_timeout",
        "session_id",
    },
}


def test_console_script_and_module_entry() -> None:
    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "jupyter-cluster"]
    assert script.load() is jupyter_cluster.cli.main
    done = subprocess.run(
        [sys.executable, "-m", "jupyter_cluster.cli", "--help"], capture_output=True, text=True
    )
    assert done.returncode == 0 and "launch" in done.stdout and "kernelspec" in done.stdout


def test_the_provisioner_entry_point_loads_the_provisioner() -> None:
    from jupyter_client.kernelspec import KernelSpec
    from jupyter_client.provisioning import KernelProvisionerFactory

    from jupyter_cluster.provisioning import ClusterProvisioner

    (ep,) = [
        e
        for e in entry_points(group="jupyter_client.kernel_provisioners")
        if e.name == "cluster-provisioner"
    ]
    assert ep.load() is ClusterProvisioner
    # what an installed kernel.json names is what jupyter_client finds
    spec = KernelSpec(
        argv=["python"],
        metadata={"kernel_provisioner": {"provisioner_name": "cluster-provisioner"}},
    )
    assert KernelProvisionerFactory.instance().is_provisioner_available(spec)


def test_the_notebook_api_names() -> None:
    from jupyter_cluster import ClusterSession
    from jupyter_cluster.session import ClusterSession as Defined
    from jupyter_cluster.widgets import LaunchForm

    assert ClusterSession is Defined
    assert callable(LaunchForm.launch)
    with pytest.raises(AttributeError):
        jupyter_cluster.NoSuchName  # noqa: B018


def test_load_ext_registers_the_cluster_magic(monkeypatch: pytest.MonkeyPatch) -> None:
    from IPython.core.interactiveshell import InteractiveShell

    monkeypatch.delenv("BACKENDAI_CLUSTER_HOST", raising=False)
    shell = InteractiveShell.instance()
    try:
        shell.run_line_magic("load_ext", "jupyter_cluster")
        assert "cluster" in shell.magics_manager.magics["line"]
    finally:
        InteractiveShell.clear_instance()


def test_the_server_extension_is_enabled_and_found() -> None:
    from jupyter_cluster.server import ClusterApp

    config = json.loads(
        (REPO / "jupyter-config/jupyter_server_config.d/jupyter_cluster.json").read_text()
    )
    assert config["ServerApp"]["jpserver_extensions"] == {"jupyter_cluster": True}
    installed = Path(sys.prefix) / "etc/jupyter/jupyter_server_config.d/jupyter_cluster.json"
    assert json.loads(installed.read_text()) == config
    (point,) = jupyter_cluster._jupyter_server_extension_points()
    assert point["app"] is ClusterApp and ClusterApp.name == "jupyter_cluster"
    assert __import__(point["module"], fromlist=["x"]).ClusterApp is ClusterApp


@pytest.mark.parametrize("section", sorted(CONFIG_KEYS))
def test_every_documented_config_key_is_a_configurable_trait(section: str) -> None:
    from jupyter_cluster.engine.manager import ClusterManager
    from jupyter_cluster.provisioning import ClusterProvisioner
    from jupyter_cluster.server import ClusterApp

    cls = {"ClusterManager": ClusterManager, "ClusterApp": ClusterApp}.get(
        section, ClusterProvisioner
    )
    assert cls.__name__ == section  # config sections are keyed by class name
    traits = cls.class_traits(config=True)
    missing = CONFIG_KEYS[section] - set(traits)
    assert not missing, f"c.{section}: keys gone: {sorted(missing)}"
    assert all(traits[name].help for name in CONFIG_KEYS[section])


def test_the_prebuilt_labextension_is_installed() -> None:
    (paths,) = jupyter_cluster._jupyter_labextension_paths()
    built = Path(jupyter_cluster.__file__).parent / paths["src"]
    package = json.loads((built / "package.json").read_text())
    assert package["name"] == paths["dest"] == "jupyter-cluster"
    assert (built / "static/style.js").is_file()
    shared = Path(sys.prefix) / "share/jupyter/labextensions/jupyter-cluster"
    assert (shared / "package.json").is_file()
