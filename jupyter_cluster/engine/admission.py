"""LocalGate: a server with its own engine applies its own launch policy.

Handed out by :meth:`~jupyter_cluster.engine.manager.ClusterManager.launch_gate` with
this process's :class:`~jupyter_cluster.engine.api.PolicySource` (the server's
``c.ClusterApp`` launch settings, or the same keys read by the notebook form and
the provisioner). The REST handlers, the session kernelspec, the notebook form and
kernels started through ``/api/kernels`` admit launches through it; the shared
service's client has its own gate (:mod:`jupyter_cluster.client.admission`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from ..core.launch_form import describe, narrow_document
from ..core.launch_options import validate
from ..core.models import LaunchSpec
from ..core.profiles import Profile, listing, resolve
from ..core.quota import Quota
from .api import Admission, PolicySource


class SpecMaker(Protocol):
    """What the gate uses of the local engine (ClusterManager)."""

    def make_spec(self, **fields: Any) -> LaunchSpec: ...

    def quota(self, sessions: int = 0) -> Quota: ...

    def user_profiles(self, owner: str) -> Mapping[str, Profile]: ...


class LocalGate:
    """Launch policy from this process's settings, on the local engine."""

    def __init__(self, engine: SpecMaker, settings: PolicySource) -> None:
        """``settings`` are bound to ``engine`` (its defaults checked against it) when a
        policy is first asked for: a kernel's launch, which only needs the quota,
        lists no folders and checks no defaults."""
        self.engine = engine
        self._settings = settings
        self._bound = False

    @property
    def settings(self) -> PolicySource:
        """The settings, bound to the engine on first use."""
        if not self._bound:
            self._settings.bind(self.engine)
            self._bound = True
        return self._settings

    def admit(self, body: Any, owner: str, groups: Sequence[str] = ()) -> Admission:
        """Validate a REST body against ``owner``'s policy (its ``profile``'s fields
        first, see :func:`~jupyter_cluster.core.profiles.resolve`); count it against the
        per-user session limit as well as the engine's per-owner limits."""
        policy = self.settings.policy(owner=owner)
        profiles = {**self.settings.profiles(), **self.engine.user_profiles(owner)}
        body = resolve(body, profiles, groups)
        fields, start_kernel = validate(body, policy)
        spec = self.engine.make_spec(**fields)
        return Admission(spec, start_kernel, self.engine.quota(policy.max_sessions_per_user))

    async def options(self, owner: str | None = None, groups: Sequence[str] = ()) -> dict[str, Any]:
        """The launch form of ``owner``'s policy, with the site's profiles visible to
        ``groups`` and the owner's own (``scope`` site or user; those the policy cannot
        launch disabled, with the reason; the owner's shadow the site's of one name)."""
        policy = self.settings.policy(owner=owner)
        form = describe(policy)
        mine = self.engine.user_profiles(owner) if owner else {}
        site = {k: v for k, v in self.settings.profiles().items() if k not in mine}
        form["profiles"] = [
            *({**p, "scope": "site"} for p in listing(site, policy, groups)),
            *({**p, "scope": "user"} for p in listing(mine, policy)),
        ]
        return form

    def groups(self) -> Sequence[str]:
        """The resource groups users may launch in."""
        return self.settings.policy().resource_groups

    def images(self) -> Sequence[str]:
        """The images users may launch, the default first."""
        return self.settings.policy().images

    def narrow(self, document: dict[str, Any], owner: str | None) -> None:
        """Narrow the OpenAPI launch schema to ``owner``'s policy."""
        narrow_document(document, self.settings.policy(owner=owner))

    def default_spec(self) -> LaunchSpec:
        """The launch form's defaults as a spec."""
        fields, _ = validate({}, self.settings.policy())
        return self.engine.make_spec(**fields)

    def quota(self) -> Quota:
        """The limits a kernel's launch counts against (REST's per-user limit too)."""
        return self.engine.quota(sessions=self._settings.max_sessions_per_user)
