"""``exec --all``: output lines keep their host and never split; the worst exit wins."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from jupyter_cluster.core.fanout import LinePrefixer, worst_exit


def test_lines_are_prefixed_whole_whatever_the_chunks() -> None:
    p = LinePrefixer("sub1", width=5)
    assert p.feed(b"hel") == b""
    assert p.feed(b"lo\nwor") == b"sub1:  hello\n"
    assert p.feed(b"ld\n\nlast") == b"sub1:  world\nsub1:  \n"
    assert p.close() == b"sub1:  last\n"
    assert p.close() == b""


@given(st.lists(st.binary(max_size=20), max_size=20))
def test_chunking_never_changes_the_lines(chunks: list[bytes]) -> None:
    p = LinePrefixer("h")
    out = b"".join(p.feed(c) for c in chunks) + p.close()
    text = b"".join(chunks)
    expected = [b"h: " + line for line in text.split(b"\n")]
    if text.endswith(b"\n") or not text:
        expected = expected[:-1]
    assert out.split(b"\n")[:-1] == expected


def test_the_worst_exit_status_wins() -> None:
    assert worst_exit([0, 0, 0]) == 0
    assert worst_exit([]) == 0
    assert worst_exit([0, 1, 0]) == 1
    assert worst_exit([2, 1, 255]) == 255
    assert worst_exit([0, -9, 1]) == 137  # killed by SIGKILL
