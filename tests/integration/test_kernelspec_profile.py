"""A kernel of a kernelspec made from a launch profile (issue 25 item 4) starts on the
real Docker engine in a session of the profile's shape, the flag given on top, and
its shutdown removes the session."""

from __future__ import annotations

import json

import pytest
from jupyter_client.manager import AsyncKernelManager

from tests.support.docker import session_objects
from tests.support.kernels import ok_cell

from .notebook_support import kernel
from .support import Workspace

pytestmark = pytest.mark.docker


async def test_a_profile_kernelspec_launches_the_profiles_shape(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = {"tiny": {"fields": {"cpu": 0.25, "mem": "256m", "env": {"FROM": "tiny"}}}}
    config = {"ClusterApp": {"launch_profiles": site}}
    (ws.config_dir / "jupyter_cluster_config.json").write_text(json.dumps(config))
    name = ws.install_kernelspec(monkeypatch, "itest-profile", "--profile", "tiny", "--mem", "320m")
    km: AsyncKernelManager
    async with kernel(name) as (km, kc):
        session_id = km.provisioner.session_id  # type: ignore[union-attr]
        cell = await ok_cell(kc, "import os; print(os.environ['FROM'])")
        assert cell.stdout == "tiny\n"
        (record,) = ws.json("ls")
        assert (record["id"], record["size"]) == (session_id, 1)
        assert record["resources"]["cpu"] == 0.25  # the profile's
        assert record["resources"]["mem"] == 320 * 1024 * 1024  # the flag's
    assert session_objects(session_id) == ([], [])
