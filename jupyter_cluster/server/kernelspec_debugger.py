"""Cluster kernelspecs written before they said ``debugger`` still get the Lab's debugger.

JupyterLab offers its debugger for a kernel only when the kernel's spec says
``metadata.debugger: true``, as ipykernel's own kernelspec does. Cluster kernels
support it (:mod:`jupyter_cluster.core.kernel_command`), and the kernelspecs this
version writes say so (:func:`jupyter_cluster.provisioning.kernelspec.kernel_json`),
but those that ``jupyter cluster kernelspec install`` wrote before lack the key, and
their users would have to find out that installing them again is the cure.

:func:`offer_debugger` wraps ``get_kernel_spec`` and ``get_all_specs`` of this
server's kernelspec manager (this one instance; no class is patched): a spec
provisioned by the cluster provisioner that has no ``debugger`` key is served with
``debugger: true``. A spec that sets the key (true or false) and every other
kernel's spec are served as written, and no file is changed (a kernelspec may live
in a folder this user cannot write). Called once by the server extension
(``ClusterApp.initialize_settings``).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from ..provisioning.kernelspec import PROVISIONER_NAME

#: Marks a wrapped method (so wrapping twice does nothing).
_MARK = "_jupyter_cluster_debugger"


def lacks_debugger(metadata: Any) -> bool:
    """Whether a kernelspec's ``metadata`` is a cluster kernelspec's without ``debugger``."""
    if not isinstance(metadata, dict) or "debugger" in metadata:
        return False
    provisioner = metadata.get("kernel_provisioner")
    return isinstance(provisioner, dict) and provisioner.get("provisioner_name") == PROVISIONER_NAME


def _spec_object(spec: Any) -> Any:
    """A KernelSpec from ``get_kernel_spec``, given the debugger when it lacks it."""
    metadata = getattr(spec, "metadata", None)
    if isinstance(metadata, dict) and lacks_debugger(metadata):
        spec.metadata = {**metadata, "debugger": True}
    return spec


def _spec_dicts(specs: Any) -> Any:
    """``get_all_specs``'s answer (name: {resource_dir, spec}), each cluster spec that
    lacks the debugger given it."""
    if not isinstance(specs, dict):
        return specs
    for entry in specs.values():
        spec = entry.get("spec") if isinstance(entry, dict) else None
        if isinstance(spec, dict) and lacks_debugger(spec.get("metadata")):
            entry["spec"] = {**spec, "metadata": {**spec["metadata"], "debugger": True}}
    return specs


def _then(result: Any, amend: Callable[[Any], Any]) -> Any:
    """``amend(result)``, or a coroutine of it when ``result`` is awaitable (an async
    kernelspec manager's): the wrapper answers as the method it wraps does."""
    if inspect.isawaitable(result):

        async def amended() -> Any:
            return amend(await result)

        return amended()
    return amend(result)


def _wrap(ksm: Any, name: str, amend: Callable[[Any], Any]) -> None:
    method = getattr(ksm, name, None)
    if method is None or getattr(method, _MARK, False):
        return

    @functools.wraps(method)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        return _then(method(*args, **kwargs), amend)

    setattr(wrapped, _MARK, True)
    setattr(ksm, name, wrapped)


def offer_debugger(ksm: Any) -> None:
    """Wrap ``ksm``'s spec readers (see the module docstring); idempotent."""
    _wrap(ksm, "get_kernel_spec", _spec_object)
    _wrap(ksm, "get_all_specs", _spec_dicts)
