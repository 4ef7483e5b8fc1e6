"""Web apps of a session: ports in main1 and the names a launch gives them.

A launch may declare apps (``--app tensorboard=6006`` in the CLI, ``"apps":
{"tensorboard": 6006}`` in REST); the session shows them, and the Lab sidebar
opens each through the server's app proxy (``cluster/proxy/{session}/{port}/``).
Used by :meth:`~jupyter_cluster.core.models.LaunchSpec.create` (declarations) and
the proxy handler (:func:`parse_port`). Pure: no IO.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from ..errors import InvalidRequest

APP_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")
#: Declared apps of one session at most.
MAX_APPS = 16
#: (name, port) pairs, in the order given.
Apps = tuple[tuple[str, int], ...]


def parse_port(value: object, field: str = "port") -> int:
    """A TCP port (1 to 65535) from user input; InvalidRequest naming ``field`` otherwise."""
    text = str(value).strip() if isinstance(value, (str, int)) else ""
    if isinstance(value, bool) or not text.isascii() or not text.isdigit():
        raise InvalidRequest(
            f"{field}: {value!r} is not a port number; give a whole number from 1 to 65535",
            field,
        )
    port = int(text[:6])
    if not 1 <= port <= 65535 or len(text) > 5:
        raise InvalidRequest(f"{field}: port {text} is out of range; use 1 to 65535", field)
    return port


def _pairs(value: object) -> Iterable[tuple[object, object]]:
    if isinstance(value, Mapping):
        return list(value.items())
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise InvalidRequest(
            "apps: give NAME=PORT pairs, e.g. {'tensorboard': 6006} or ['tensorboard=6006']",
            "apps",
        )
    pairs = []
    for item in value:
        if isinstance(item, str) and "=" in item:
            name, _, port = item.partition("=")
            pairs.append((name.strip(), port.strip()))
        elif isinstance(item, (list, tuple)) and len(item) == 2:
            pairs.append((item[0], item[1]))
        else:
            raise InvalidRequest(
                f"apps: {item!r} is not NAME=PORT; write e.g. tensorboard=6006", "apps"
            )
    return pairs


def parse_apps(value: object) -> Apps:
    """Declared apps from a mapping (REST) or ``NAME=PORT`` texts (CLI); () for None.

    Names are letters, digits, ``.``, ``_`` and ``-``; each name and each port once.
    """
    if value is None:
        return ()
    apps: list[tuple[str, int]] = []
    for name, port in _pairs(value):
        if not isinstance(name, str) or not APP_NAME_RE.fullmatch(name):
            raise InvalidRequest(
                f"apps: {name!r} is not a valid app name; use letters, digits, '.', '_' "
                "and '-' (at most 40, starting with a letter or digit)",
                "apps",
            )
        number = parse_port(port, "apps")
        if any(name == n for n, _ in apps):
            raise InvalidRequest(f"apps: {name} is declared twice", "apps")
        if any(number == p for _, p in apps):
            raise InvalidRequest(f"apps: port {number} is declared twice", "apps")
        apps.append((name, number))
    if len(apps) > MAX_APPS:
        raise InvalidRequest(f"apps: at most {MAX_APPS} apps, got {len(apps)}", "apps")
    return tuple(apps)


def apps_dict(apps: Apps) -> dict[str, int]:
    """The JSON shape of declared apps: ``{name: port}`` in declaration order."""
    return dict(apps)
