"""The shared service loads no server extension but jupyter_cluster (review X14)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jupyter_cluster.server.serve import only_this_extension, service_config

HUB_ENV = {
    "JUPYTERHUB_API_TOKEN": "t",
    "JUPYTERHUB_API_URL": "http://127.0.0.1:8081/hub/api",
    "JUPYTER_CLUSTER_SERVE_URL": "http://127.0.0.1:10101/services/cluster/",
}


def test_every_extension_enabled_in_the_config_path_is_turned_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config_d = tmp_path / "jupyter_server_config.d"
    config_d.mkdir()
    enabled = {"ServerApp": {"jpserver_extensions": {"someones_ext": True, "jupyter_lsp": True}}}
    (config_d / "someones_ext.json").write_text(json.dumps(enabled))
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path))
    extensions = only_this_extension()
    assert extensions["someones_ext"] is False and extensions["jupyter_lsp"] is False
    assert [name for name, on in extensions.items() if on] == ["jupyter_cluster"]
    config = service_config(HUB_ENV)
    assert config.ServerApp.jpserver_extensions == extensions
    assert config.ClusterApp.record_request_metrics is False  # /metrics: no one's requests
