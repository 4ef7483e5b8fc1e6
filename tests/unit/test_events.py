"""The server's events stream as the differences between two session models.

:func:`jupyter_cluster.server.events.diff` is pure: it needs no server and no Docker.
"""

from __future__ import annotations

from typing import Any

from jupyter_cluster.server.events import diff


def test_events_are_the_differences_between_two_models() -> None:
    def model(status: str, *containers: str) -> dict[str, Any]:
        return {
            "id": "s1",
            "name": "s1",
            "owner": "ada",
            "status": status,
            "status_reason": "",
            "containers": [
                {"host": f"h{i}", "status": c, "status_reason": "", "container_id": None,
                 "agent": "a"}
                for i, c in enumerate(containers)
            ],
        }  # fmt: skip

    first = diff(None, model("PENDING", "PENDING"))
    assert [(e["type"], e["previous_status"]) for e in first] == [
        ("session", None),
        ("container", None),
    ]
    assert {e["owner"] for e in first} == {"ada"}  # the events stream filters by it
    later = diff(
        model("PREPARING", "PENDING", "CREATING"), model("PREPARING", "RUNNING", "CREATING")
    )
    assert [(e["type"], e["status"], e["previous_status"]) for e in later] == [
        ("container", "RUNNING", "PENDING")
    ]
    assert diff(model("RUNNING", "RUNNING"), model("RUNNING", "RUNNING")) == []
