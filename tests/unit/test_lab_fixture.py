"""The JupyterLab extension's jest fixture is what the server really answers.

``labextension/src/__tests__/launch-options.json`` is loaded by the jest tests of
the launch dialog as ``GET launch-options``. It must equal :func:`describe` of the
policy below byte for byte, so a change of the server's launch form that the
TypeScript form does not know about fails here (and then, once regenerated, in
jest). Regenerate it with ``UPDATE_LAB_FIXTURE=1 pytest tests/unit/test_lab_fixture.py``.
"""

from __future__ import annotations

import json
import os

from jupyter_cluster.core.launch_form import describe
from jupyter_cluster.core.policy import LaunchPolicy
from jupyter_cluster.core.units import parse_size
from tests.support.constants import IMAGE, REPO

FIXTURE = REPO / "labextension/src/__tests__/launch-options.json"
#: The server's default limits, with two images, two groups and two folders.
POLICY = LaunchPolicy(
    images=(IMAGE, "other:1"),
    max_size=16,
    max_cpu=8.0,
    max_mem=parse_size("16g"),
    max_shm=parse_size("4g"),
    max_gpu=8,
    resource_groups=("default", "gpu"),
    folders=("data", "models"),
    max_sessions_per_user=8,
)


def rendered() -> str:
    """The fixture's text: the server's launch options for :data:`POLICY`."""
    return json.dumps(describe(POLICY), indent=2, sort_keys=True) + "\n"


def test_the_lab_fixture_is_the_servers_launch_options() -> None:
    if os.environ.get("UPDATE_LAB_FIXTURE"):
        FIXTURE.write_text(rendered())
    assert FIXTURE.read_text() == rendered(), (
        "the launch form changed on the server side: regenerate the jest fixture with "
        "UPDATE_LAB_FIXTURE=1 pytest tests/unit/test_lab_fixture.py and run the jest tests"
    )


def test_the_fixture_describes_every_field_the_server_checks() -> None:
    fields = [f["name"] for f in json.loads(FIXTURE.read_text())["fields"]]
    assert fields[0] == "image" and "start_kernel" in fields
    assert set(fields) == set(describe(POLICY)["defaults"])
