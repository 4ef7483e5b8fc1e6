"""Tests of jupyter_cluster.core.units: Docker-style sizes and CPU amounts."""

from __future__ import annotations

import pytest

from jupyter_cluster.core.units import format_size, parse_cpu, parse_size, whole_number
from jupyter_cluster.errors import InvalidRequest

KIB, MIB, GIB, TIB = 1024, 1024**2, 1024**3, 1024**4


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("512m", 512 * MIB),
        ("2g", 2 * GIB),
        ("2G", 2 * GIB),
        ("1.5G", int(1.5 * GIB)),
        ("1024", 1024),
        ("1024b", 1024),
        ("64k", 64 * KIB),
        ("1t", TIB),
        ("512mb", 512 * MIB),
        ("512MiB", 512 * MIB),
        (" 512 m ", 512 * MIB),
        ("0", 0),
        (4096, 4096),
        (2.0, 2),
    ],
)
def test_parse_size_accepts_docker_sizes(text: str | int | float, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize(
    "bad", ["", "lots", "-1g", "1x", "g", "1.g", "1 2g", "1e3", -1, float("inf"), float("nan")]
)
def test_parse_size_rejects_malformed_input_naming_the_field(bad: object) -> None:
    with pytest.raises(InvalidRequest) as info:
        parse_size(bad, "shm")  # type: ignore[arg-type]
    assert info.value.field == "shm"
    assert str(info.value).startswith("shm: ")


def test_parse_size_rejects_bool() -> None:
    with pytest.raises(InvalidRequest, match="512m or 2g"):
        parse_size(True)


def test_parse_size_error_tells_how_to_write_a_size() -> None:
    with pytest.raises(InvalidRequest, match=r"e\.g\. 512m or 2g"):
        parse_size("lots")


def test_parse_size_infinite_is_not_called_negative() -> None:
    with pytest.raises(InvalidRequest, match="finite") as info:
        parse_size(float("inf"))
    assert "negative" not in str(info.value)


@pytest.mark.parametrize(
    ("n_bytes", "text"),
    [
        (0, "0"),
        (1000, "1000"),
        (KIB, "1k"),
        (512 * MIB, "512m"),
        (2 * GIB, "2g"),
        (3 * TIB, "3t"),
        (1536, "1.5k"),
        (int(1.5 * GIB), "1.5g"),
        (GIB + 512 * MIB + 1, "1.5g"),
    ],
)
def test_format_size(n_bytes: int, text: str) -> None:
    assert format_size(n_bytes) == text


@pytest.mark.parametrize("n_bytes", [0, 1, 1023, KIB, 1536, 6 * MIB, 512 * MIB, 7 * GIB, 2 * TIB])
def test_format_size_reads_back_exactly_for_round_sizes(n_bytes: int) -> None:
    assert parse_size(format_size(n_bytes)) == n_bytes


def test_format_size_of_odd_sizes_is_close() -> None:
    text = format_size(GIB + 123)
    assert text.endswith("g")
    assert abs(parse_size(text) - (GIB + 123)) < 0.01 * GIB


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("0.5", 0.5),
        (2, 2.0),
        (0.25, 0.25),
        ("1500m", 1.5),
        ("250M", 0.25),
        (" 3 ", 3.0),
        ("0.01", 0.01),
        ("10m", 0.01),
        ("0.125", 0.125),
    ],
)
def test_parse_cpu(value: str | float, expected: float) -> None:
    assert parse_cpu(value) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("bad", "hint"),
    [
        ("abc", "not a CPU count"),
        ("m", "not a CPU count"),
        ("", "not a CPU count"),
        (None, "not a CPU count"),
        ([1], "not a CPU count"),
        (0, "above 0"),
        ("-1", "above 0"),
        ("nan", "above 0"),
        ("1e400", "finite"),
        ("0.0125", "steps of 0.001"),
        ("0.001", "smallest CPU limit is 0.01"),
        ("4e-10", "smallest CPU limit is 0.01"),
        (4e-10, "smallest CPU limit is 0.01"),
        ("9m", "smallest CPU limit"),
        (True, "CPU count"),
    ],
)
def test_parse_cpu_rejects_bad_values(bad: object, hint: str) -> None:
    with pytest.raises(InvalidRequest, match=hint) as info:
        parse_cpu(bad)  # type: ignore[arg-type]
    assert info.value.field == "cpu"


@pytest.mark.parametrize("value", ["1e308", "2e6", 10**7])
def test_parse_cpu_rejects_absurdly_large_counts(value: object) -> None:
    with pytest.raises(InvalidRequest) as info:
        parse_cpu(value)  # type: ignore[arg-type]
    assert info.value.field == "cpu"
    assert "far more" in str(info.value)


@pytest.mark.parametrize("value", ["1" * 400, "9" * 30 + "g", 10**30, 2**63])
def test_parse_size_rejects_sizes_beyond_any_machine(value: object) -> None:
    with pytest.raises(InvalidRequest) as info:
        parse_size(value)  # type: ignore[arg-type]
    assert info.value.field == "mem"
    assert "larger than any machine" in str(info.value)


@pytest.mark.parametrize(
    ("value", "expected"), [(3, 3), (3.0, 3), ("3", 3), (" 7 ", 7), (-2, -2), (0.0, 0)]
)
def test_whole_number_takes_whole_numbers(value: object, expected: int) -> None:
    assert whole_number(value) == expected


@pytest.mark.parametrize(
    "value", [True, False, 2.5, float("inf"), float("-inf"), float("nan"), "2.5", "", None, [1]]
)
def test_whole_number_refuses_the_rest_with_value_error(value: object) -> None:
    with pytest.raises(ValueError, match="not a whole number"):
        whole_number(value)
