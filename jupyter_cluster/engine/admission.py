"""LocalGate: a server with its own engine applies its own launch policy.

Handed out by :meth:`~jupyter_cluster.engine.manager.ClusterManager.launch_gate` with
this process's :class:`~jupyter_cluster.engine.api.PolicySource` (the server's
``c.ClusterApp`` launch settings, or the same keys read by the notebook form and
the provisioner). The REST handlers, the session kernelspec, the notebook form and
kernels started through ``/api/kernels`` admit launches through it; the shared
service's client has its own gate (:mod:`jupyter_cluster.client.admission`).

Every launch is bounded by its owner's resource policy
(:meth:`~jupyter_cluster.config.LaunchSettings.resource_policy`, with the owner's Hub
groups): the form's maxima, groups and images; the lifetime (a launch asking for
none gets the policy's); the priority (the policy's, or one the launch asks for
within its range); and the :class:`Quota` the store checks in the transaction
that inserts the session (totals held and each session's maxima, so a kernel's
launch meets them too).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from ..core.launch_form import describe, narrow_document
from ..core.launch_options import validate
from ..core.models import LaunchSpec
from ..core.profiles import Profile, listing, resolve
from ..core.quota import Quota
from ..core.resource_policies import Resolved, parse_fields
from ..core.resource_policies import resolve as resolve_policy
from ..core.time_limits import format_duration
from ..errors import InvalidRequest, NotFound
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
        #: The Hub groups each owner last launched with (for the idle clean-up, which
        #: knows a session's owner only).
        self._groups_seen: dict[str, tuple[str, ...]] = {}

    @property
    def settings(self) -> PolicySource:
        """The settings, bound to the engine on first use."""
        if not self._bound:
            self._settings.bind(self.engine)
            self._bound = True
        return self._settings

    def admit(self, body: Any, owner: str, groups: Sequence[str] = ()) -> Admission:
        """Validate a REST body against ``owner``'s policy (its ``profile``'s fields
        first, see :func:`~jupyter_cluster.core.profiles.resolve`); count it against
        the owner's resource policy (with their Hub ``groups``)."""
        self._groups_seen[owner] = tuple(groups)
        limits = self.settings.resource_policy(owner, groups).policy
        policy = self.settings.policy(owner=owner, groups=groups)
        profiles = {**self.settings.profiles(), **self.engine.user_profiles(owner)}
        body = resolve(body, profiles, groups)
        priority = limits.priority  # the policy's, unless the launch asks within its range
        if isinstance(body, dict) and body.get("priority") is not None:
            priority = limits.check_priority(body["priority"])
        if isinstance(body, dict):
            body = {k: v for k, v in body.items() if k != "priority"}
        fields, start_kernel = validate(body, policy)
        cap = limits.max_lifetime
        site = getattr(self.engine, "max_session_lifetime", 0.0)  # applies by itself
        if cap and cap != site and fields.get("max_lifetime") is None:
            fields["max_lifetime"] = cap
        elif cap and fields["max_lifetime"] > cap:
            raise InvalidRequest(
                f"max_lifetime: your limits allow sessions of at most {format_duration(cap)}",
                "max_lifetime",
            )
        spec = self.engine.make_spec(**fields, priority=priority)
        return Admission(spec, start_kernel, limits.quota())

    async def options(self, owner: str | None = None, groups: Sequence[str] = ()) -> dict[str, Any]:
        """The launch form of ``owner``'s policy, with the site's profiles visible to
        ``groups`` and the owner's own (``scope`` site or user; those the policy cannot
        launch disabled, with the reason; the owner's shadow the site's of one name)."""
        policy = self.settings.policy(owner=owner, groups=groups)
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

    def quota(self, owner: str, groups: Sequence[str] = ()) -> Quota:
        """The limits a kernel's launch by ``owner`` counts against: their resource
        policy's totals and per-session maxima."""
        return self.resource_policy(owner, groups).policy.quota()

    def resource_policy(self, owner: str, groups: Sequence[str] = ()) -> Resolved:
        """``owner``'s resource policy and where it comes from (``GET limits``)."""
        return self.settings.resource_policy(owner, groups)

    def idle_timeout(self, owner: str, groups: Sequence[str] | None = None) -> float | None:
        """Seconds after which ``owner``'s idle sessions end under their policy, None
        when it sets none (the site's timeout applies); ``groups`` default to those the
        owner last launched with. The server hands this to the engine's utilization
        idle clean-up (``ClusterManager.utilization_idle_timeout_for``)."""
        seen = self._groups_seen.get(owner, ()) if groups is None else groups
        return self.resource_policy(owner, seen).policy.idle_timeout or None

    # -- admins' run-time changes (REST limits/{users|groups}/NAME, the CLI) ---------

    def limits_entry(self, kind: str, name: str) -> dict[str, Any]:
        """User or group ``name``'s entry (``kind`` users/groups): as configured, as
        changed at run time, and the policy it makes."""
        settings = self.settings
        default = settings.default_policy()
        entries = settings.policy_entries()
        if kind == "users":
            effective = resolve_policy(name, (), default, entries["users"], {}).policy
        else:
            effective = default.updated(entries["groups"].get(name, {}))
        return {
            "kind": kind,
            "name": name,
            "configured": (settings.resource_policies.get(kind) or {}).get(name) or {},
            "changed": self._overrides().get(kind, name),
            "effective": effective.to_dict(),
        }

    def set_limits(self, kind: str, name: str, keys: Any) -> dict[str, Any]:
        """Keep ``keys`` as ``name``'s run-time change (over its configured entry);
        InvalidRequest for a wrong key. The entry as :meth:`limits_entry` shows it."""
        parse_fields(keys)
        self.settings.default_policy().updated(keys)
        self._overrides().put(kind, name, dict(keys))
        return self.limits_entry(kind, name)

    def remove_limits(self, kind: str, name: str) -> None:
        """Drop ``name``'s run-time change (NotFound when there is none)."""
        self._overrides().remove(kind, name)

    def _overrides(self) -> Any:
        found = self.settings.policy_overrides()
        if found is None:
            raise NotFound("this engine keeps no run-time limits (it has no store)")
        return found
