"""Loading a module of ``bench/`` in the tests, by its file, under a name of its own.

``bench/`` is not a package (its scripts import ``common`` with ``bench/`` on
``sys.path``); the unit tests of its pure parts (the harness, the README table) load
the files they test with :func:`load_bench_module`.
"""

from __future__ import annotations

import importlib.util
from types import ModuleType

from .constants import REPO


def load_bench_module(name: str, relative: str) -> ModuleType:
    """The module in ``REPO/relative`` (e.g. ``bench/common/harness.py``), loaded and
    run as ``name``."""
    spec = importlib.util.spec_from_file_location(name, REPO / relative)
    assert spec and spec.loader, f"no module at {relative}"
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
