"""ServiceGate: in team mode the shared service's launch policy applies, not this server's.

Handed out by :meth:`~jupyter_cluster.client.remote_engine.RemoteEngine.launch_gate`. A
user's server passes launch bodies on to the service, which checks them against
its own policy and the caller's limits and counts every launch of the user; the
launch form, the images and the groups are the service's. :class:`RemoteLaunch`
is a launch as this client checked it and sends it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.models import LaunchSpec
from ..engine.api import Admission
from ..errors import InvalidRequest


@dataclass(frozen=True)
class RemoteLaunch:
    """A launch checked here and described as the service's REST body."""

    body: dict[str, Any] = field(default_factory=dict)
    #: The spec as checked here (None for a REST body passed on unchecked).
    spec: LaunchSpec | None = None


def start_kernel_field(body: Any) -> bool:
    """The ``start_kernel`` field of a launch body (checked here: the service only
    records it, this server starts the kernel)."""
    value = body.get("start_kernel", False)
    if not isinstance(value, bool):
        raise InvalidRequest("start_kernel: expected true or false", "start_kernel")
    return value


def remote_launch(body: Any) -> RemoteLaunch:
    """A REST launch body passed on to the shared service, which validates it."""
    if not isinstance(body, dict):
        raise InvalidRequest("body: expected a JSON object", "body")
    return RemoteLaunch({k: v for k, v in body.items() if k != "start_kernel"})


class ServiceGate:
    """The shared service's launch policy (see the module docstring)."""

    def __init__(self, options: Callable[[], Awaitable[Any]]) -> None:
        """``options``: reads the service's launch form (``GET launch-options``)."""
        self._options = options

    def admit(self, body: Any, owner: str, groups: Sequence[str] = ()) -> Admission:
        """Pass the body on (``profile`` too); the service checks it and counts it."""
        return Admission(remote_launch(body), start_kernel_field(body), None)

    async def options(self, owner: str | None = None, groups: Sequence[str] = ()) -> dict[str, Any]:
        """The service's launch form for the caller (its policy and profiles, not this
        server's)."""
        described: dict[str, Any] = await self._options()
        return described

    def groups(self) -> Sequence[str]:
        """None named here: the service lists the groups the caller may use."""
        return ()

    def images(self) -> Sequence[str]:
        """None named here: the service lists the images the caller may use."""
        return ()

    def narrow(self, document: dict[str, Any], owner: str | None) -> None:
        """Nothing: the service's own document carries its limits."""

    def default_spec(self) -> None:
        """None: the service's launch defaults apply to this server's kernels."""
        return None

    def quota(self, owner: str, groups: Sequence[str] = ()) -> None:
        """None: the service counts every launch of its users."""
        return None

    def resource_policy(self, owner: str, groups: Sequence[str] = ()) -> None:
        """None: the service resolves its users' policies (``GET limits`` there)."""
        return None
