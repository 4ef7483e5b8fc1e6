"""Agents, resource groups, images, launch options, the OpenAPI document, configuration.

The configuration comes from both places the issue names: ``jupyter_cluster_config.py``
(agents, allowed images, a limit) and the server's own config (limits, default
launch options), and every read-only route reflects it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jupyter_cluster.server.handlers import default_handlers
from tests.support.constants import IMAGE

from .support import jp_async, ok_http

pytestmark = pytest.mark.docker
MISSING = "jupyter-cluster/not-built:1"


@pytest.fixture
def cluster_config(jp_config_dir: Path, tmp_path: Path) -> dict[str, Any]:
    (tmp_path / "folders" / "datasets").mkdir(parents=True)
    (jp_config_dir / "jupyter_cluster_config.py").write_text(
        f"c.ClusterManager.data_root = {str(tmp_path / 'folders')!r}\n"
        "c.ClusterManager.agents = [\n"
        "    {'id': 'a1', 'resource_group': 'g1', 'cpu': 2, 'mem': '4g'},\n"
        "    {'id': 'a2', 'resource_group': 'g2', 'cpu': 1.5, 'mem': '2g'},\n"
        "    {'id': 'a3', 'resource_group': 'g2', 'cpu': 0.5, 'mem': '1g'},\n"
        "]\n"
        f"c.ClusterApp.allowed_images = [{MISSING!r}, {IMAGE!r}]\n"
        "c.ClusterApp.max_sessions_per_user = 3\n"
    )
    # The server's config wins over jupyter_cluster_config (ExtensionApp's order).
    return {
        "ClusterApp": {
            "max_gpu": 0,
            "max_mem": "2g",
            "default_launch_options": {"size": 2, "cpu": 0.5, "nonsense": 1},
        }
    }


@jp_async
async def test_agents_and_resource_groups(jp_fetch: Any, cluster: Any) -> None:
    agents = {a["id"]: a for a in await ok_http(jp_fetch, "agents")}
    assert set(agents) == {"a1", "a2", "a3"}
    assert agents["a2"]["capacity"]["cpu"] == 1.5
    assert agents["a2"]["capacity"]["mem"] == 2 * 1024**3
    assert agents["a1"]["reachable"] is True
    assert agents["a1"]["free"] == {"cpu": 2.0, "mem": 4 * 1024**3, "gpu": 0}
    groups = {g["name"]: g for g in await ok_http(jp_fetch, "resource-groups")}
    assert set(groups) == {"g1", "g2"}
    assert sorted(groups["g2"]["agents"]) == ["a2", "a3"]
    assert groups["g2"]["capacity"] == {"cpu": 2.0, "mem": 3 * 1024**3, "gpu": 0}
    assert groups["g2"]["used"] == {"cpu": 0.0, "mem": 0, "gpu": 0}
    assert groups["g2"]["free"] == groups["g2"]["capacity"]


@jp_async
async def test_images_are_the_allow_list_default_first(jp_fetch: Any, cluster: Any) -> None:
    images = await ok_http(jp_fetch, "images")
    assert [i["name"] for i in images] == [IMAGE, MISSING]
    assert [i["default"] for i in images] == [True, False]
    assert images[0]["agents"] == {"a1": True, "a2": True, "a3": True}
    assert images[1]["agents"]["a1"] is False


@jp_async
async def test_launch_options_describe_the_form(jp_fetch: Any, cluster: Any) -> None:
    options = await ok_http(jp_fetch, "launch-options")
    fields = {f["name"]: f for f in options["fields"]}
    assert [f["name"] for f in options["fields"]] == [
        "image", "size", "mode", "cpu", "mem", "shm", "gpu", "mounts",
        "resource_group", "name", "bootstrap", "command", "max_lifetime", "retries",
        "env", "apps", "start_kernel",
    ]  # fmt: skip
    for field in options["fields"]:
        assert {"type", "label", "help", "default"} <= set(field)
    assert fields["image"]["choices"] == [IMAGE, MISSING]
    assert fields["image"]["default"] == IMAGE
    assert fields["size"] == {**fields["size"], "minimum": 1, "maximum": 16, "default": 2}
    assert fields["cpu"]["default"] == 0.5
    assert fields["mem"]["maximum_bytes"] == 2 * 1024**3
    assert fields["gpu"]["maximum"] == 0
    assert fields["mode"]["choices"] == ["single-node", "multi-node"]
    assert fields["resource_group"]["choices"] == ["g1", "g2"]
    assert fields["mounts"]["choices"] == ["datasets"]
    assert fields["start_kernel"] == {**fields["start_kernel"], "type": "boolean", "default": False}
    assert options["limits"]["max_sessions_per_user"] == 3
    assert options["defaults"]["size"] == 2
    assert "nonsense" not in options["defaults"]


@jp_async
async def test_the_openapi_document(jp_fetch: Any, jp_base_url: str, cluster: Any) -> None:
    document = await ok_http(jp_fetch, "openapi.json")
    assert document["openapi"].startswith("3.")
    assert document["servers"] == [{"url": jp_base_url + "cluster/api"}]
    assert len(document["paths"]) == len(default_handlers)
    launch = document["paths"]["/sessions"]["post"]
    assert set(launch["responses"]) >= {"201", "400", "403"}


@jp_async
async def test_the_session_kernelspec_carries_the_defaults(jp_fetch: Any, cluster: Any) -> None:
    specs = (await jp_fetch("api", "kernelspecs")).body
    found = json.loads(specs)["kernelspecs"]["jupyter-cluster-session"]
    spec = found["spec"]
    provisioner = spec["metadata"]["kernel_provisioner"]
    assert provisioner["provisioner_name"] == "cluster-provisioner"
    assert provisioner["config"]["size"] == 2
    assert provisioner["config"]["cpu"] == "0.5"
    # its launcher tile says what clicking it launches, with the cluster logo (#14.6)
    assert spec["display_name"].startswith("Cluster: 2 \u00d7 0.5 CPU, ")
    assert spec["display_name"].endswith("(launch form defaults)")
    assert "logo-svg" in found["resources"]


@jp_async
async def test_a_cluster_kernelspec_written_before_debugger_offers_it(
    jp_fetch: Any, jp_kernel_dir: Path, cluster: Any
) -> None:
    """One that an earlier ``jupyter cluster kernelspec install`` wrote (no
    ``metadata.debugger``, which JupyterLab reads to offer its debugger) is served
    with it; its file stays as it was, and another kernel's spec is served as written."""
    old = {
        "argv": ["python3", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Cluster: 2 (old)",
        "language": "python",
        "metadata": {
            "kernel_provisioner": {"provisioner_name": "cluster-provisioner", "config": {}}
        },
    }
    plain = {**old, "display_name": "plain", "metadata": {}}
    for name, spec in (("old-cluster", old), ("plain", plain)):
        (jp_kernel_dir / name).mkdir(parents=True)
        (jp_kernel_dir / name / "kernel.json").write_text(json.dumps(spec))
    every = json.loads((await jp_fetch("api", "kernelspecs")).body)["kernelspecs"]
    assert every["old-cluster"]["spec"]["metadata"]["debugger"] is True
    assert "debugger" not in every["plain"]["spec"]["metadata"]
    one = json.loads((await jp_fetch("api", "kernelspecs", "old-cluster")).body)
    assert one["spec"]["metadata"]["debugger"] is True
    written = json.loads((jp_kernel_dir / "old-cluster" / "kernel.json").read_text())
    assert written == old
