"""LineSplitter: whole lines from chunks, long lines cut, memory bounded, linear time."""

from __future__ import annotations

import time

from jupyter_cluster.core.lines import LineSplitter


def split(chunks: list[str], max_line: int = 10) -> list[str]:
    splitter = LineSplitter(max_line)
    lines = [line for chunk in chunks for line in splitter.feed(chunk)]
    rest = splitter.flush()
    return lines + ([rest] if rest else [])


def test_lines_across_chunks() -> None:
    assert split(["ab", "c\nde", "f\n\ng"]) == ["abc\n", "def\n", "\n", "g"]
    assert split(["ready\n"]) == ["ready\n"]
    assert split([]) == []


def test_a_line_longer_than_the_bound_is_cut_into_pieces() -> None:
    assert split(["x" * 25 + "\n"]) == ["x" * 10 + "\n", "x" * 10 + "\n", "x" * 5 + "\n"]
    assert split(["xxxxxx", "xxxxxx", "x"]) == ["x" * 10 + "\n", "xxx"]


def test_a_huge_line_costs_linear_time_and_bounded_memory() -> None:
    splitter = LineSplitter(64 * 1024)
    chunk = "y" * 16384
    began = time.perf_counter()
    longest = 0
    pieces = 0
    for _ in range(6400):  # 100 MiB without a newline, as Docker sends it
        for line in splitter.feed(chunk):
            longest = max(longest, len(line))
            pieces += 1
        assert splitter._size <= 64 * 1024
    assert pieces == 1600 and longest == 64 * 1024 + 1
    assert time.perf_counter() - began < 10
