"""The CLI's counts, ``logs --tail N`` and ``audit --limit N``, as the parser reads them.

A negative ``--tail`` printed nothing, and a negative ``--limit`` read every record
(SQLite takes ``LIMIT -1`` as none); both, and words, are now refused the way the
CLI refuses any bad input: exit code 2 and one line saying what to give.
"""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_cluster.cli.parser import build_parser


def parsed(*argv: str) -> dict[str, Any]:
    return vars(build_parser().parse_args(list(argv)))


def refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as caught:
        build_parser().parse_args(list(argv))
    assert caught.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def test_tail_takes_zero_or_more_lines(capsys: pytest.CaptureFixture[str]) -> None:
    assert parsed("logs", "S", "--tail", "0")["tail"] == 0
    assert parsed("logs", "S", "--tail", "20")["tail"] == 20
    assert parsed("logs", "S")["tail"] is None
    for word in ("-1", "x", "1.5", "", "9" * 5000):
        err = refused(capsys, "logs", "S", f"--tail={word}")
        assert "--tail: give a whole number of lines, 0 or more" in err, err


def test_limit_takes_one_or_more_records(capsys: pytest.CaptureFixture[str]) -> None:
    assert parsed("audit")["limit"] == 1000
    assert parsed("audit", "--limit", "5")["limit"] == 5
    for word in ("0", "-3", "all"):
        err = refused(capsys, "audit", f"--limit={word}")
        assert "--limit: give a whole number of records, 1 or more" in err, err
