"""The Engine protocol: what every front end may ask of the engine, whichever serves it.

Two engines implement it: :class:`~jupyter_cluster.engine.manager.ClusterManager`
(the agents and the store are this process's) and, in team mode,
:class:`~jupyter_cluster.client.remote_engine.RemoteEngine` (a shared service owns them).
:func:`jupyter_cluster.config.make_engine` picks one, once; the CLI, the notebook
API, the provisioner and the server extension are typed against this protocol
only, so mypy checks them against both. What differs between the two is behind
it, never asked about: whose launch policy applies (:class:`LaunchGate`), how
main1 is reached (:class:`~.route_api.MainRoute`), what a long-running server keeps going in
the background (:class:`Upkeep`), who drives a detached launch
(:meth:`Engine.hand_off`) and the bookkeeping of phases and endings.
"""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any, NamedTuple, Protocol, TypeVar

from ..core.access import Access
from ..core.audit import AuditEvent
from ..core.folder_streams import FolderRead, FolderUpload
from ..core.folders import FolderInfo
from ..core.launch_check import LaunchCheck
from ..core.models import LaunchSpec, Session
from ..core.policy import LaunchPolicy
from ..core.profiles import Profile
from ..core.quota import Quota
from ..core.resource_policies import Resolved, ResourcePolicy
from ..core.stats import Usage
from .agents.base import OutputCallback
from .route_api import MainRoute
from .store.exec_log import ExecLog

#: Called with the session each time it changes while a launch is driven or watched.
SessionCallback = Callable[[Session], None]
#: What ``make_spec`` returns and ``submit`` takes: a LaunchSpec for the local
#: engine, a checked REST body for the shared service's client.
SpecT = TypeVar("SpecT")


class SessionReads(Protocol):
    """The blocking reads the server extension makes (from worker threads)."""

    def list(self, include_ended: bool = False) -> builtins.list[Session]: ...

    def get(self, session_id: str) -> Session | None: ...


class Upkeep(Protocol):
    """A background job a long-running front end (the server) keeps going."""

    def start(self) -> None: ...

    async def stop(self) -> None: ...


class Admission(NamedTuple):
    """A REST launch body as the applicable policy admits it."""

    spec: Any  # what the engine's submit takes
    start_kernel: bool
    quota: Quota | None  # None: the shared service counts it


class PolicySource(Protocol):
    """What users may launch (``c.ClusterApp.*``: :class:`~jupyter_cluster.config.
    LaunchSettings`); a local engine's gate binds it to itself."""

    max_sessions_per_user: int

    def bind(self, engine: Any) -> None: ...

    def policy(
        self,
        defaults: dict[str, Any] | None = None,
        owner: str | None = None,
        groups: Sequence[str] = (),
    ) -> LaunchPolicy: ...

    def resource_policy(self, owner: str | None = None, groups: Sequence[str] = ()) -> Resolved: ...

    def default_policy(self) -> ResourcePolicy: ...

    def policy_entries(self) -> dict[str, dict[str, dict[str, Any]]]: ...

    def policy_overrides(self) -> Any: ...

    @property
    def resource_policies(self) -> dict[str, Any]: ...

    def profiles(self) -> Mapping[str, Profile]: ...


class LaunchGate(Protocol):
    """Whose launch policy applies to launches from this process: this server's
    settings (local engine) or the shared service's own (team mode)."""

    def admit(self, body: Any, owner: str, groups: Sequence[str] = ()) -> Admission:
        """Check a REST launch body (``POST sessions``); its ``profile`` is one of those
        visible to the owner's Hub ``groups``."""
        ...

    async def options(self, owner: str | None = None, groups: Sequence[str] = ()) -> dict[str, Any]:
        """The launch form's description (``GET launch-options``, the notebook form),
        with the launch profiles visible to ``groups``."""
        ...

    def groups(self) -> Sequence[str]:
        """Resource groups to list (empty: the engine lists what the caller may use)."""
        ...

    def images(self) -> Sequence[str]:
        """Images to list, the default first (empty: the engine lists them)."""
        ...

    def narrow(self, document: dict[str, Any], owner: str | None) -> None:
        """Narrow the OpenAPI document's launch schema to this policy, if it is ours."""
        ...

    def default_spec(self) -> LaunchSpec | None:
        """The launch form's defaults as a spec (the server's session kernelspec);
        None when the shared service's defaults apply."""
        ...

    def quota(self, owner: str, groups: Sequence[str] = ()) -> Quota | None:
        """The limits a kernel's launch by ``owner`` (with Hub ``groups``) is counted
        against: their resource policy (None: the service counts)."""
        ...

    def resource_policy(self, owner: str, groups: Sequence[str] = ()) -> Resolved | None:
        """``owner``'s resource policy and its source (None: the service's applies;
        ask it, ``GET limits``)."""
        ...


class Engine(Protocol[SpecT]):
    """Every front end's engine (see the module docstring)."""

    @property
    def store(self) -> SessionReads: ...

    @property
    def exec_log(self) -> ExecLog: ...

    async def start(self) -> None: ...
    async def refresh(self) -> None: ...
    async def close(self) -> None: ...

    def make_spec(self, **fields: Any) -> SpecT: ...
    def quota(self, sessions: int = 0) -> Quota | None: ...
    async def submit(
        self, spec: SpecT, *, owner: str = "", quota: Quota | None = None, kernel: bool = False
    ) -> Session: ...
    async def check(
        self, spec: SpecT, *, owner: str = "", quota: Quota | None = None
    ) -> LaunchCheck: ...
    async def drive(
        self, session_id: str, *, on_change: SessionCallback | None = None
    ) -> Session: ...
    async def launch(
        self, spec: SpecT, *, owner: str = "", on_change: SessionCallback | None = None
    ) -> Session: ...
    async def terminate(self, ref: str, reason: str = "") -> Session: ...

    async def get(self, ref: str, owner: str | None = None) -> Session: ...
    async def list(self, include_ended: bool = False) -> builtins.list[Session]: ...
    async def page(
        self, state: str, limit: int, before: str | None = None, owner: str | None = None
    ) -> builtins.list[Session]: ...
    def check_logs(self, session: Session, host: str) -> None: ...
    def logs(
        self, ref: str, host: str, *, tail: int | None = None, follow: bool = False
    ) -> AsyncIterator[str]: ...
    async def exec(
        self, ref: str, host: str, cmd: Sequence[str], *, on_output: OutputCallback | None = None
    ) -> int: ...
    async def stats(self, ref: str) -> dict[str, Usage | None]: ...
    async def access(self, ref: str) -> Access: ...
    async def agents_info(self) -> builtins.list[dict[str, object]]: ...
    async def resource_groups_info(self, groups: Sequence[str]) -> Any: ...
    async def images_info(self, images: Sequence[str]) -> Any: ...

    async def list_folders(self, owner: str = "") -> builtins.list[FolderInfo]: ...
    async def create_folder(self, name: str, owner: str = "") -> FolderInfo: ...
    async def remove_folder(self, name: str, owner: str = "") -> None: ...
    async def rename_folder(self, name: str, new_name: str, owner: str = "") -> FolderInfo: ...

    # Files inside data folders (``path``: names from core.folder_paths.path_parts);
    # streamed both ways (core.folder_streams). The shared service's client sends
    # them to the service, which acts for the token's user only.
    async def folder_entry(
        self, name: str, path: tuple[str, ...], owner: str = ""
    ) -> dict[str, Any]: ...
    async def open_folder_path(
        self, name: str, path: tuple[str, ...], owner: str = ""
    ) -> FolderRead: ...
    async def upload_folder_file(
        self, name: str, path: tuple[str, ...], owner: str = ""
    ) -> FolderUpload: ...
    async def make_folder_dir(self, name: str, path: tuple[str, ...], owner: str = "") -> None: ...
    async def move_folder_path(
        self, name: str, path: tuple[str, ...], to: tuple[str, ...], owner: str = ""
    ) -> None: ...
    async def delete_folder_path(
        self, name: str, path: tuple[str, ...], recursive: bool = False, owner: str = ""
    ) -> None: ...
    async def list_profiles(self, owner: str = "") -> builtins.list[Profile]: ...
    async def save_profile(self, profile: Profile, owner: str = "") -> Profile: ...
    async def remove_profile(self, name: str, owner: str = "") -> None: ...

    # -- what differs, behind the protocol ----------------------------------------

    def launch_gate(self, settings: PolicySource) -> LaunchGate:
        """Whose launch policy applies (``settings``: this process's, used by a local
        engine only)."""
        ...

    def main_route(self) -> MainRoute:
        """A new route to main1 of this engine's sessions."""
        ...

    def upkeep(self, on_change: Callable[[], None]) -> Sequence[Upkeep]:
        """Background jobs a server keeps while it runs (none for a client)."""
        ...

    async def hand_off(self, session: Session, spawn: Callable[[str], int]) -> None:
        """Have a launch driven after this process exits (``launch --no-wait``):
        ``spawn(session_id)`` starts a detached driver and returns its pid, unless
        the engine drives its launches itself."""
        ...

    def record_action(self, event: AuditEvent) -> None:
        """Keep ``event`` (see :func:`~jupyter_cluster.core.audit.session_event`) in the
        audit log of what this engine did for a front end that has no server of its
        own (the CLI); the shared service's client keeps nothing (the service
        records every request it serves, SSH key handouts included)."""
        ...

    def mark_ending(self, session_id: str) -> bool:
        """Mark a session TERMINATING so its removal may finish in the background;
        False when this engine cannot (then terminate it in the foreground)."""
        ...

    async def remove_subs(self, session_id: str) -> None:
        """Start ending a running session whose main1 kernel was asked to exit: mark it
        TERMINATING and remove its other containers meanwhile, so that
        :meth:`terminate` has only main1 and the network left (a script's
        ``shutdown_kernel``). Does nothing where the service ends sessions."""
        ...

    def phase_missing(self, session_id: str, phase: str) -> Session | None:
        """The session, if this engine records phase timings and lacks ``phase``."""
        ...

    def record_phases(self, session_id: str, timings: Mapping[str, float]) -> None:
        """Keep phase timings measured by a front end (e.g. ``kernel_ready``)."""
        ...
