"""Parsing and formatting of Docker-style sizes and CPU amounts.

Pure helpers used by the models (to validate launch input) and by front ends (to
print capacities). ``512m`` is 512 MiB, ``2g`` is 2 GiB: powers of 1024, as Docker.
"""

from __future__ import annotations

import math
import re

from ..errors import InvalidRequest

MAX_BYTES = 2**62  # sizes above this are typos, and would overflow Docker's int64
MAX_CPUS = 1_000_000
#: Docker refuses CPU limits below this (and 0 would mean no limit at all).
MIN_CPUS = 0.01
_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([bkmgt]?)(?:i?b)?\s*$", re.IGNORECASE)


def parse_size(value: str | int | float, field: str = "mem") -> int:
    """Turn ``"512m"``, ``"2g"``, ``"1.5G"``, ``"1024"`` or an int into bytes.

    Raises :class:`InvalidRequest` naming ``field`` when the text is malformed.
    """
    if isinstance(value, bool):
        raise InvalidRequest(f"{field}: expected a size like 512m or 2g, got {value!r}", field)
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            raise InvalidRequest(f"{field}: a size must be a finite number, got {value}", field)
        if value < 0:
            raise InvalidRequest(f"{field}: a size cannot be negative, got {value}", field)
        if value > MAX_BYTES:
            raise InvalidRequest(f"{field}: {value} is far larger than any machine", field)
        return int(value)
    match = _SIZE_RE.match(str(value))
    if not match:
        raise InvalidRequest(
            f"{field}: {value!r} is not a size; write it like Docker does, e.g. 512m or 2g", field
        )
    number, unit = match.groups()
    size = float(number) * _UNITS[unit.lower()]
    if not math.isfinite(size) or size > MAX_BYTES:
        raise InvalidRequest(f"{field}: {value!r} is far larger than any machine", field)
    return int(size)


def format_size(n_bytes: int) -> str:
    """Format bytes the way :func:`parse_size` reads them (``512m``, ``2g``, ``23.54g``)."""
    for unit in ("t", "g", "m", "k"):
        factor = _UNITS[unit]
        if n_bytes >= factor:
            if n_bytes % factor == 0:
                return f"{n_bytes // factor}{unit}"
            return f"{n_bytes / factor:.2f}".rstrip("0").rstrip(".") + unit
    return str(n_bytes)


def parse_cpu(value: str | int | float, field: str = "cpu") -> float:
    """Turn ``"0.5"``, ``2`` or ``"1500m"`` (millicores) into a positive CPU count."""
    if isinstance(value, bool):
        raise InvalidRequest(f"{field}: expected a CPU count such as 0.5 or 2", field)
    try:
        if isinstance(value, str) and value.strip().lower().endswith("m"):
            cpus = float(value.strip()[:-1]) / 1000
        else:
            cpus = float(value)
    except (TypeError, ValueError):
        raise InvalidRequest(
            f"{field}: {value!r} is not a CPU count; use a number such as 0.5 or 2", field
        ) from None
    if not math.isfinite(cpus) or cpus <= 0:
        raise InvalidRequest(
            f"{field}: the CPU count must be a finite number above 0, got {value!r}", field
        )
    if cpus < MIN_CPUS - 1e-12:
        raise InvalidRequest(
            f"{field}: Docker's smallest CPU limit is {MIN_CPUS:g} CPU (10m), got {value!r}", field
        )
    if cpus > MAX_CPUS:
        raise InvalidRequest(f"{field}: {value!r} CPUs is far more than any machine has", field)
    if round(cpus * 1000) != cpus * 1000 and abs(round(cpus * 1000) - cpus * 1000) > 1e-6:
        raise InvalidRequest(f"{field}: CPU counts go in steps of 0.001, got {value!r}", field)
    return cpus


def whole_number(value: object) -> int:
    """``value`` as an int when it is a whole number: an int, a finite float without
    a fraction, or text of digits; ValueError for anything else (a bool, 2.5, JSON's
    Infinity or NaN, a list). The launch parsers (size, gpu, priority, retries) call
    it and turn the ValueError into their field's InvalidRequest."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a whole number")
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise ValueError(f"{value!r} is not a whole number")
    try:
        return int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"{value!r} is not a whole number") from exc
