"""Image names in settings, checked as the configuration is read.

A misspelt ``ClusterManager.default_image`` (``Jupyter-Cluster/Kernel``) was taken,
and then every launch without an image was refused. Each class of settings that
names images puts :func:`image_names` among its traits, so the program that reads
the configuration ends at once with the setting's name and what is wrong (see
:func:`jupyter_cluster.core.images.image_refusal`).
"""

from __future__ import annotations

from typing import Any

from traitlets import TraitError, validate

from .core.images import image_refusal


def image_names(*names: str, empty_means_default: bool = False) -> Any:
    """A traitlets validator for ``names``, settings holding an image name or a list
    of them: each must be an image reference Docker takes ("" too, with
    ``empty_means_default``). Put it in the class body under a name no other class of
    the same object uses."""

    def check(self: Any, proposal: Any) -> Any:
        value = proposal["value"]
        for image in [value] if isinstance(value, str) else value:
            if empty_means_default and image == "":
                continue
            refusal = image_refusal(image)
            if refusal:
                raise TraitError(f"{type(self).__name__}.{proposal['trait'].name}: {refusal}")
        return value

    return validate(*names)(check)
