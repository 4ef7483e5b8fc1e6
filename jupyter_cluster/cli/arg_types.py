"""The argparse types of ``jupyter cluster …``'s flags that need more than ``int``:
seconds, counts and image names, each refused with one line that says what to give.

Used by :mod:`.parser`; pure (the image rule is :mod:`jupyter_cluster.core.images`').
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from ..core.images import image_refusal


def seconds(text: str) -> float:
    """An argparse type: a finite number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"give seconds above 0, e.g. 300, not {text!r}")
    return value


def count(least: int, what: str) -> Callable[[str], int]:
    """An argparse type: a whole number of ``what``, ``least`` or more (a negative
    ``--tail`` printed nothing, and a negative ``--limit`` meant no limit at all)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:  # not a number, or too many digits for one
            value = least - 1
        if value < least:
            raise argparse.ArgumentTypeError(
                f"give a whole number of {what}, {least} or more, not {text!r}"
            )
        return value

    return parse


def image_reference(text: str) -> str:
    """An argparse type: an image reference Docker takes (``image build --tag 'bad tag'``
    began a build before Docker refused the name)."""
    refusal = image_refusal(text)
    if refusal:
        raise argparse.ArgumentTypeError(refusal)
    return text
