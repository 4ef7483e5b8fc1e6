"""``%cluster launch --profile NAME [flags]`` in a local kernel (issue 25 item 4) on
the real Docker engine: the profile's fields with the flags given on top, the
session printed and returned; an unknown profile gives the engine's one error line.
With ``--dry-run`` it says where the session would start, or the launch's refusal,
and makes nothing."""

from __future__ import annotations

import json

from tests.support.docker import running_hosts, session_objects
from tests.support.kernels import ok_cell

from .notebook_support import local_kernel, refused_line
from .support import Workspace


async def test_magic_launches_a_profile_with_the_flags_on_top(ws: Workspace) -> None:
    site = {"tiny": {"description": "one tiny", "fields": {"cpu": 0.25, "mem": "256m"}}}
    config = {"ClusterApp": {"launch_profiles": site}}
    (ws.config_dir / "jupyter_cluster_config.json").write_text(json.dumps(config))
    async with local_kernel(ws) as (_km, kc):
        await ok_cell(kc, "%load_ext jupyter_cluster")
        # A dry run first: where it would start, and nothing made.
        cell = await ok_cell(kc, "%cluster launch --profile tiny --size 2 --dry-run")
        assert cell.stdout == "would start now on local: main1, sub1\n", str(cell)
        assert ws.json("ls", "--all") == []
        cell = await ok_cell(
            kc, "s = %cluster launch --profile tiny --mem 320m --name by-magic\nprint(s.id)"
        )
        session_id = cell.stdout.splitlines()[-1]
        try:
            assert "name      by-magic" in cell.stdout, str(cell)
            (record,) = ws.json("ls")
            assert (record["id"], record["status"], record["size"]) == (session_id, "RUNNING", 1)
            assert record["resources"]["cpu"] == 0.25  # the profile's
            assert record["resources"]["mem"] == 320 * 1024 * 1024  # the flag won
            assert running_hosts(session_id) == {"main1": True}
        finally:
            await ok_cell(kc, f"%cluster rm {session_id}")
        assert session_objects(session_id) == ([], [])

        cell = await refused_line(kc, "%cluster launch --profile nope", "%cluster: ")
        assert "no launch profile named 'nope'" in cell.stderr and "tiny" in cell.stderr
        cell = await refused_line(
            kc, "%cluster launch --profile tiny --size 9 --dry-run", "%cluster: "
        )
        assert "size: no agent of group 'default' can ever hold 9" in cell.stderr, str(cell)
        await refused_line(kc, "%cluster launch --size 2", "%cluster: launch flags go with")
        assert ws.json("ls") == []
