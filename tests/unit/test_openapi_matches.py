"""The OpenAPI document names what the engine says: every launch phase and every
container and session status (schemathesis only finds a gap when a run happens to
produce the missing value)."""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

from jupyter_cluster.core.state import ContainerStatus, SessionStatus
from jupyter_cluster.core.timings import PHASES


def schemas() -> dict[str, Any]:
    text = files("jupyter_cluster.server").joinpath("openapi.json").read_text()
    return dict(json.loads(text)["components"]["schemas"])


def test_the_timings_schema_has_every_phase_in_order() -> None:
    timings = schemas()["Session"]["properties"]["timings"]
    assert list(timings["properties"]) == list(PHASES)
    assert timings["additionalProperties"] is False


def test_the_status_enums_are_the_engines() -> None:
    found = schemas()
    session = found["Session"]["properties"]["status"]["enum"]
    assert session == [s.value for s in SessionStatus]
    container = found["Container"]["properties"]["status"]["enum"]
    assert container == [s.value for s in ContainerStatus]
