"""Session time limits: durations, the site's limit, the warning and the end.

A session may have a maximum lifetime (``max_lifetime``, under the site's
``ClusterManager.max_session_lifetime``). :meth:`~.models.LaunchSpec.create`
checks it with :func:`parse_lifetime`, the engine's ``make_spec`` with
:func:`check_site_limit`, and the lifetime watch
(:mod:`jupyter_cluster.engine.lifetime`) decides with :func:`lifetime_due` and
words its reasons with :func:`warning_reason` and :func:`lifetime_reason`. Pure.
"""

from __future__ import annotations

import math
import re
import time

from ..errors import InvalidRequest

#: ``wait``'s exit code for a session ended by its lifetime (as timeout(1) says).
LIFETIME_EXIT = 124
#: The warning comes this long before the limit, or at 90 % of it if that is later.
WARN_BEFORE = 60.0
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$", re.IGNORECASE)


def parse_lifetime(value: object, field: str = "max_lifetime") -> float | None:
    """Seconds from ``90``, ``"90s"``, ``"30m"``, ``"2h"`` or ``"1d"``; None for no limit
    (None, "", 0). InvalidRequest naming ``field`` otherwise, also for a boolean
    (``false`` equals 0 in Python, but is no duration)."""
    seconds: float
    if isinstance(value, bool):
        seconds = math.nan
    elif value is None or value == "" or value == 0:
        return None
    elif isinstance(value, (int, float)):
        seconds = float(value)
    elif isinstance(value, str) and (m := _DURATION.match(value)):
        seconds = float(m.group(1)) * _UNITS[(m.group(2) or "s").lower()]
    else:
        seconds = math.nan
    if not 0 < seconds < math.inf:
        raise InvalidRequest(
            f"{field}: {value!r} is not a duration; give seconds or e.g. 90s, 30m, 2h, 1d",
            field,
        )
    return seconds


def check_site_limit(lifetime: float | None, site: float) -> None:
    """InvalidRequest when a session's ``lifetime`` exceeds the site's limit (``site``
    seconds, 0: none); the engine's ``make_spec`` calls it."""
    if site and lifetime is not None and lifetime > site:
        raise InvalidRequest(
            f"max_lifetime: {format_duration(lifetime)} is more than this site allows "
            f"({format_duration(site)}); ask for at most that",
            "max_lifetime",
        )


def effective_lifetime(lifetime: float | None, site: float) -> float | None:
    """The limit that applies: the session's own, else the site's (0: none)."""
    return lifetime if lifetime is not None else (site or None)


def format_duration(seconds: float) -> str:
    """``90s``, ``30m``, ``2h``, ``1h30m``: the shortest exact form (whole seconds)."""
    total = round(seconds)
    if total < 60:
        return f"{total}s"
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if total >= size:
            parts.append(f"{total // size}{unit}")
            total %= size
    return "".join(parts)


#: How the reason of a session ended at its limit begins.
LIFETIME_PREFIX = "reached its maximum lifetime"


def lifetime_reason(limit: float) -> str:
    """Why a session ended at its limit (kept in its history)."""
    return f"{LIFETIME_PREFIX} of {format_duration(limit)}"


#: How the lifetime warning (a status reason, so an event) begins.
WARNING_PREFIX = "will reach its maximum lifetime"


def warning_reason(limit: float, deadline: float) -> str:
    """The status reason (and so the event) a session gets before its limit; it names
    the moment (UTC), so it is the same text at every check."""
    at = time.strftime("%H:%M:%S UTC", time.gmtime(deadline))
    return f"{WARNING_PREFIX} of {format_duration(limit)} at {at}"


def lifetime_due(started: float, limit: float | None, now: float) -> str:
    """``"end"`` at or past the limit, ``"warn"`` within the warning's reach (the last
    60 s, or the last 10 % of a short limit), else ``""``."""
    if limit is None:
        return ""
    age = now - started
    if age >= limit:
        return "end"
    return "warn" if age >= limit - min(WARN_BEFORE, limit * 0.1) else ""
