"""Every setting a site can configure (a traitlet with ``config=True``) is named in the
README, where an admin looks it up; six were not (``service_url``,
``folders_per_owner``…). The configurable classes are found by walking the package,
so a class or a setting added later is checked too."""

from __future__ import annotations

import importlib
import pkgutil
import re

from traitlets.config import Configurable

import jupyter_cluster
from tests.support.readme import README


def configurables() -> set[type[Configurable]]:
    """Every Configurable class defined in the package (each module imported)."""
    for module in pkgutil.walk_packages(jupyter_cluster.__path__, "jupyter_cluster."):
        importlib.import_module(module.name)
    found: set[type[Configurable]] = set()
    todo: list[type[Configurable]] = [Configurable]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if sub.__module__.startswith("jupyter_cluster."):
                found.add(sub)
    return found


def ours(cls: type, name: str) -> bool:
    """Whether trait ``name`` of ``cls`` is defined by a class of the package."""
    owner = next(k for k in cls.__mro__ if name in vars(k))
    return owner.__module__.startswith("jupyter_cluster.")


def test_every_setting_is_named_in_the_readme() -> None:
    text = README.read_text()
    settings = {
        (cls.__name__, name)
        for cls in configurables()
        for name in cls.class_traits(config=True)
        if ours(cls, name)  # not jupyter_server's (ClusterApp is an ExtensionApp)
    }
    assert len(settings) > 100  # the walk found the engine's, the server's, the kernels'
    # named as `name`, `c.Class.name` or `a`, `name` in a table's cell
    unnamed = [s for s in settings if not re.search(rf"[`.]{s[1]}\b", text)]
    assert sorted(unnamed) == []
