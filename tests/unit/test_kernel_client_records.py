"""The parity tests' message records join a stream cut in pieces (tests/server/kernel_client.py).

ipykernel may send ``print``'s text and newline as two ``stream`` messages when
its IO thread flushes between them; the parity tests compare what a front end
shows, so these pieces must compare equal to one message, and nothing else may.
"""

from __future__ import annotations

from tests.server.kernel_client import by_channel


def test_consecutive_pieces_of_one_stream_are_joined() -> None:
    seen = [
        ("iopub", "status", ("busy",)),
        ("iopub", "stream", ("stdout", "False")),
        ("iopub", "stream", ("stdout", "\n")),
        ("shell", "execute_reply", ("ok", None)),
        ("iopub", "status", ("idle",)),
    ]
    assert by_channel(seen) == {
        "iopub": [("status", ("busy",)), ("stream", ("stdout", "False\n")), ("status", ("idle",))],
        "shell": [("execute_reply", ("ok", None))],
    }


def test_different_streams_and_separated_pieces_stay_apart() -> None:
    seen = [
        ("iopub", "stream", ("stdout", "a")),
        ("iopub", "stream", ("stderr", "b")),
        ("iopub", "execute_input", ("x",)),
        ("iopub", "stream", ("stderr", "c")),
    ]
    assert by_channel(seen)["iopub"] == [
        ("stream", ("stdout", "a")),
        ("stream", ("stderr", "b")),
        ("execute_input", ("x",)),
        ("stream", ("stderr", "c")),
    ]
