"""Bounds of numeric settings, checked as the configuration is read.

A traitlets ``Float`` or ``Int`` takes any number. Out of its range a setting did
harm or nothing, silently: an interval of 0 or less makes its loop spin, a
negative timeout fails every call at once, a negative limit limits nothing. Each
class of settings puts :func:`bounded` among its traits for the settings it owns,
so a wrong value ends the program that reads it with the setting's name and what
to give (the CLI prints that as one line; see ``cli/main.py``).
"""

from __future__ import annotations

from typing import Any

from traitlets import TraitError, validate


def bounded(least: float, *names: str, above: bool = False, unit: str = "a number") -> Any:
    """A traitlets validator for ``names``: each must be ``least`` or more (more than
    ``least`` with ``above``; NaN is neither); ``unit`` names what is given
    (``seconds``, ``days``…) in the error. Put it in the class body under a name
    no other class of the same object uses (a subclass's would hide it)."""

    def check(self: Any, proposal: Any) -> Any:
        value = proposal["value"]
        fits = value > least if above else value >= least  # NaN fits neither
        if not fits:
            bound = f"above {least:g}" if above else f"{least:g} or more"
            name = proposal["trait"].name
            raise TraitError(f"{type(self).__name__}.{name}: give {unit}, {bound}; got {value!r}")
        return value

    return validate(*names)(check)


def waits(*names: str) -> Any:
    """:func:`bounded` for intervals and timeouts: seconds above 0 (0 would spin a
    loop, or fail every call at once)."""
    return bounded(0, *names, above=True, unit="seconds")
