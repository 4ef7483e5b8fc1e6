"""The notebook launch form's word on room (``widgets_room.RoomLine``): the estimate at
once, then the engine's dry run in its place, only for the values still in the form;
a refusal is said as one, and no answer leaves the estimate. The engine's side is
given as finished futures here; ``tests/integration/test_notebook.py`` asks a real one.
"""

from __future__ import annotations

from concurrent.futures import Future
from types import SimpleNamespace

from jupyter_cluster.core.launch_check import LaunchCheck
from jupyter_cluster.core.models import LaunchSpec
from jupyter_cluster.errors import AgentError, Conflict, InvalidRequest
from jupyter_cluster.widgets_room import RoomLine
from tests.support.constants import IMAGE

HEAD = "Total: <b>2 CPU</b>; "


def done(result: object) -> Future[LaunchCheck]:
    future: Future[LaunchCheck] = Future()
    if isinstance(result, BaseException):
        future.set_exception(result)
    else:
        future.set_result(result)  # type: ignore[arg-type]
    return future


def test_the_engines_answer_replaces_the_estimate_for_the_same_values() -> None:
    total = SimpleNamespace(value="")
    line = RoomLine(total, ask=False)
    spec = LaunchSpec.create(image=IMAGE, size=2)
    line.update(spec, HEAD, "fits on agent local now")
    assert total.value == HEAD + "fits on agent local now" and line.answer is None
    line._answered(spec, done(LaunchCheck.placed(["local", "local"])))
    assert total.value == HEAD + "would start now on local: main1, sub1"
    assert line.answer == "would start now on local: main1, sub1"


def test_an_answer_for_values_no_longer_shown_is_dropped() -> None:
    total = SimpleNamespace(value="")
    line = RoomLine(total, ask=False)
    old, new = LaunchSpec.create(image=IMAGE), LaunchSpec.create(image=IMAGE, size=3)
    line.update(old, HEAD, "estimate for 1")
    line.update(new, HEAD, "estimate for 3")
    line._answered(old, done(LaunchCheck.placed(["local"])))
    assert total.value == HEAD + "estimate for 3" and line.answer is None


def test_a_refusal_is_said_and_no_answer_leaves_the_estimate() -> None:
    total = SimpleNamespace(value="")
    line = RoomLine(total, ask=False)
    spec = LaunchSpec.create(image=IMAGE)
    line.update(spec, HEAD, "estimate")
    line._answered(spec, done(AgentError("the agent local does not answer")))
    assert total.value == HEAD + "estimate"
    line._answered(spec, done(Conflict("the limit is 1; <terminate> one first")))
    assert total.value == HEAD + "would be refused: the limit is 1; &lt;terminate&gt; one first"
    line._answered(spec, done(InvalidRequest("size: never", "size")))
    assert line.answer == "would be refused: size: never"


def test_wrong_values_show_no_total() -> None:
    total = SimpleNamespace(value="before")
    line = RoomLine(total, ask=False)
    line.update(None)
    assert total.value == ""
