"""Environment variables a user sets at launch (``--env KEY=VALUE``, REST ``env``).

:func:`parse_env` checks them for :meth:`~.models.LaunchSpec.create` (every front
end: CLI, REST, the notebook form, kernelspecs); :func:`~.naming.container_env`
adds them to every container, so they reach the kernel, ``exec``, terminals and
SSH sessions the same way the ``BACKENDAI_*`` variables do. Values may hold
tokens: no message here ever quotes one, and what is shown of a session
(:func:`env_names`) carries the names only. Pure: standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from ..errors import InvalidRequest

#: A shell identifier: what ``export NAME=…`` and sshd's environment file accept.
NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Prefixes of the variables the project sets itself.
RESERVED_PREFIXES = ("BACKENDAI_", "JC_", "JUPYTER_CLUSTER_")
#: Other names the project sets in containers (:func:`~.naming.container_env`, the
#: GPU count, the kernel's ``PYTHONPATH`` and terminals' ``TERM``), and ``PATH``,
#: which it keeps from the image: a PATH of the user's would hide the image's python3.
RESERVED_NAMES = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "GPU_COUNT",
        "N_GPUS",
        "GPU_TYPE",
        "PYTHONPATH",
        "TERM",
    }
)
MAX_VARIABLES = 100
#: Characters of all names and values together.
MAX_TOTAL = 64 * 1024

Env = tuple[tuple[str, str], ...]


def is_reserved(name: str) -> bool:
    """Whether the project sets ``name`` itself."""
    return name in RESERVED_NAMES or name.startswith(RESERVED_PREFIXES)


def parse_env(value: object, allowed: Iterable[str] = ()) -> Env:
    """Check launch variables into ``((name, value), …)`` in the order given.

    ``value``: a mapping of names to text (REST, the store) or ``KEY=VALUE`` texts
    (CLI flags, kernelspec configs, the form's lines); None is none. ``allowed``:
    reserved names a site lets users set (``ClusterManager.allowed_env_names``).
    Raises :class:`InvalidRequest` (field ``env``) naming the variable, never
    quoting a value.
    """
    if value is None:
        return ()
    if isinstance(value, Mapping):
        pairs = list(value.items())
    elif isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise InvalidRequest("env: give an object of names and values, or KEY=VALUE texts", "env")
    else:
        pairs = [_split(i, item) for i, item in enumerate(value, 1)]
    if len(pairs) > MAX_VARIABLES:
        raise InvalidRequest(f"env: at most {MAX_VARIABLES} variables", "env")
    exempt = set(allowed)
    seen: set[str] = set()
    total = 0
    for name, text in pairs:
        if not isinstance(name, str) or not NAME_RE.fullmatch(name):
            shown = repr(name)[:70] if isinstance(name, str) else "a name that is not text"
            raise InvalidRequest(
                f"env: {shown} is not a variable name; use letters, digits and '_', "
                "not starting with a digit",
                "env",
            )
        if is_reserved(name) and name not in exempt:
            raise InvalidRequest(
                f"env: {name} is set by jupyter-cluster itself; choose another name (reserved: "
                + ", ".join([*(p + "*" for p in RESERVED_PREFIXES), *sorted(RESERVED_NAMES)])
                + ")",
                "env",
            )
        if name in seen:
            raise InvalidRequest(f"env: {name} is given twice; give each variable once", "env")
        seen.add(name)
        if not isinstance(text, str):
            raise InvalidRequest(f"env: the value of {name} must be text", "env")
        # sshd's environment file holds one variable a line; NUL ends C strings.
        if "\n" in text or "\r" in text or "\x00" in text:
            raise InvalidRequest(
                f"env: the value of {name} holds a line break or NUL; give one line", "env"
            )
        total += len(name) + len(text)
    if total > MAX_TOTAL:
        raise InvalidRequest(f"env: at most {MAX_TOTAL} characters in all", "env")
    return tuple((name, text) for name, text in pairs)


def _split(index: int, item: object) -> tuple[object, object]:
    if not isinstance(item, str) or "=" not in item:
        # Not quoted: a mistyped item may well be a secret.
        raise InvalidRequest(f"env: item {index} is not KEY=VALUE", "env")
    name, _, text = item.partition("=")
    return name, text


def env_lines(text: str) -> list[str]:
    """The ``KEY=VALUE`` items of a multi-line form field (blank lines skipped)."""
    return [line for line in text.splitlines() if line.strip()]


def stored_env(value: object) -> Env:
    """The variables of a spec read back (:meth:`~.models.LaunchSpec.from_dict`): the
    store's mapping of names and values; a public shape's list of names has no
    values to use, so none."""
    if not isinstance(value, Mapping):
        return ()
    return tuple((str(name), str(text)) for name, text in value.items())


def env_names(env: Env) -> list[str]:
    """What is shown of a session's variables (REST, ``show``, events): names only."""
    return [name for name, _ in env]
