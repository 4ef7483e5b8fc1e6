"""RemoteEngine: the engine's front-end surface, served by the shared service over REST.

Built by :func:`jupyter_cluster.config.make_engine` when ``ClusterManager.service_url``
is set; the CLI, the notebook API, the provisioner and the server extension then
call it exactly as they call a :class:`~jupyter_cluster.engine.manager.ClusterManager`
(``make_spec``, ``submit``, ``drive``, ``get``, ``list``, ``logs``, ``exec``,
``terminate``, ``agents_info``, the caller's data folders and profiles
(:mod:`.remote_owned`) and the files in them (:mod:`.remote_folder_files`) …;
``tests/unit/test_remote_surface.py`` keeps the two in step). The service decides
who the caller is from the token (a user's server's own ``JUPYTERHUB_API_TOKEN``),
validates launches against its policy and the caller's limits, and drives launches
itself; ``drive`` here only watches.
Commands in containers go over SSH with the session's key (:mod:`.shell`).
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import os
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any

from ..core.access import Access
from ..core.audit import AuditEvent
from ..core.launch_check import LaunchCheck
from ..core.launch_env import RESERVED_NAMES
from ..core.launch_spec import LAUNCH_FIELDS, check_fields
from ..core.models import LaunchSpec, Session
from ..core.naming import DEFAULT_IMAGE
from ..core.state import SETTLING, USABLE, SessionStatus
from ..core.stats import Usage
from ..engine.api import PolicySource, SessionCallback, Upkeep
from ..engine.store.exec_log import ExecLog
from ..errors import InvalidRequest, LaunchFailed
from ..paths import cluster_dir
from ..reach.ssh import SshRoute
from .admission import RemoteLaunch, ServiceGate
from .http import ServiceHTTP
from .remote_owned import RemoteOwned, ref_path
from .remote_store import RemoteStore
from .shell import ContainerShell, OutputCallback


class RemoteEngine(RemoteOwned):
    """The shared service's sessions, seen by one user (see the module docstring)."""

    def __init__(
        self,
        url: str,
        token: str,
        *,
        timeout: float = 30.0,
        poll_interval: float = 0.25,
        exec_log: str | None = None,
        allow_http: bool = False,
    ) -> None:
        """``exec_log``: the file of this user's :class:`ExecLog` (default:
        ``activity.db`` in the user's jupyter-cluster directory); ``allow_http``: send
        the token over plain http too (see :mod:`.address`)."""
        self.url = url
        self.http = ServiceHTTP(url, token, timeout, allow_http=allow_http)
        self.store = RemoteStore(self.http)
        self.poll_interval = poll_interval
        # Commands go over SSH, unseen by the service: this user's server counts them
        # as use (its idle clean-up) from this log, shared by the user's processes.
        self.exec_log = ExecLog(exec_log or os.path.join(cluster_dir(), "activity.db"))

    # -- life ------------------------------------------------------------------------

    async def start(self) -> None:
        """Check that the service answers (and accepts the token)."""
        await self.http.call("GET", "launch-options")

    async def refresh(self) -> None:
        """Nothing to do: the service reconciles its agents itself."""

    async def close(self) -> None:
        """Close the HTTP clients and the exec log."""
        await self.http.close()
        self.exec_log.close()

    # -- launching ----------------------------------------------------------------------

    def make_spec(self, **fields: Any) -> RemoteLaunch:
        """Check launch fields here (units, names) and keep them as the REST body;
        the service applies its own limits and default image."""
        check_fields(fields)
        given = {k: v for k, v in fields.items() if v is not None}
        # The service knows which reserved names its site allows (allowed_env_names).
        given["env_allowed"] = RESERVED_NAMES
        spec = LaunchSpec.create(**{"image": DEFAULT_IMAGE, **given, "max_size": 1 << 30})
        res = spec.resources
        canonical: dict[str, Any] = {
            "size": spec.size,
            "mode": spec.mode.value,
            "cpu": res.cpu,
            "mem": res.mem,
            "shm": res.shm,
            "gpu": res.gpu,
            "mounts": [str(m) for m in spec.mounts],
            "env": dict(spec.env),
            "apps": dict(spec.apps),
        }
        # only what was given: the service's defaults fill in the rest
        body = {k: canonical.get(k, given[k]) for k in LAUNCH_FIELDS if k in given}
        return RemoteLaunch(body, spec)

    def quota(self, sessions: int = 0) -> None:
        """Limits are the service's: it counts every launch of the caller."""
        return None

    async def submit(
        self, spec: RemoteLaunch, *, owner: str = "", quota: Any = None, kernel: bool = False
    ) -> Session:
        """Ask the service for a session (it becomes the token user's); with
        ``kernel`` the session records a kernel id for this server to start."""
        body = {**spec.body, "start_kernel": kernel}  # the service checks it again
        return Session.from_public(await self.http.call("POST", "sessions", body))

    async def check(self, spec: RemoteLaunch, *, owner: str = "", quota: Any = None) -> LaunchCheck:
        """Ask the service what this launch would meet now (its dry run, as the token's
        user, with that user's limits and folders); its refusals raise as a launch's."""
        return LaunchCheck.from_dict(await self.http.call("POST", "sessions", spec.body, dry_run=1))

    async def drive(self, session_id: str, *, on_change: SessionCallback | None = None) -> Session:
        """Watch a launch the service drives until it settles; like the engine's,
        raises LaunchFailed for ERROR, and cancels the session if cancelled itself."""
        seen: tuple[Any, ...] | None = None
        try:
            while True:
                session = await self.get(session_id)
                state = (session.status, session.status_reason, session.containers)
                if state != seen and on_change is not None:
                    on_change(session)
                seen = state
                if session.status not in SETTLING:
                    break
                await asyncio.sleep(self.poll_interval)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await asyncio.shield(self.terminate(session_id))
            raise
        if session.status is SessionStatus.ERROR:
            raise LaunchFailed(
                f"cluster session {session.name} failed: {session.status_reason or 'no reason'}"
            )
        return session

    async def launch(
        self, spec: RemoteLaunch, *, owner: str = "", on_change: SessionCallback | None = None
    ) -> Session:
        """Submit and watch until it runs."""
        session = await self.submit(spec, owner=owner)
        return await self.drive(session.id, on_change=on_change)

    # -- reading ----------------------------------------------------------------------------

    async def get(self, ref: str, owner: str | None = None) -> Session:
        """A session of the caller by id, unique id prefix or name (the service
        scopes it to the token's user; ``owner`` is for the engine's signature)."""
        return Session.from_public(await self.http.call("GET", f"sessions/{ref_path(ref)}"))

    async def list(self, include_ended: bool = False) -> builtins.list[Session]:
        """The caller's sessions (an admin's: everyone's)."""
        reply = await self.http.call("GET", "sessions", all="1" if include_ended else None)
        return [Session.from_public(s) for s in reply]

    async def page(
        self, state: str, limit: int, before: str | None = None, owner: str | None = None
    ) -> builtins.list[Session]:
        """A page of the caller's sessions, newest first (the service scopes it to the
        token's user; ``owner`` is for the engine's signature)."""
        reply = await self.http.call(
            "GET", "sessions", state=state, limit=str(limit), before=before
        )
        return [Session.from_public(s) for s in reply]

    def check_logs(self, session: Session, host: str) -> None:
        """NotFound unless the session has ``host`` (the service answers the rest)."""
        session.locate(host)

    async def logs(
        self, ref: str, host: str, *, tail: int | None = None, follow: bool = False
    ) -> AsyncIterator[str]:
        """Lines of one container's log, streamed from the service."""
        path = f"sessions/{ref_path(ref)}/containers/{ref_path(host)}/logs"
        async for line in self.http.lines(path, tail=tail, follow="1" if follow else None):
            yield line

    async def agents_info(self) -> builtins.list[dict[str, object]]:
        """The agents as the service reports them."""
        reply: builtins.list[dict[str, object]] = await self.http.call("GET", "agents")
        return reply

    async def resource_groups_info(self, groups: Sequence[str] = ()) -> Any:
        """The resource groups this user may launch in, summed over their agents."""
        return await self.http.call("GET", "resource-groups")

    async def images_info(self, images: Sequence[str] = ()) -> Any:
        """The images this user may launch, and which agents have each."""
        return await self.http.call("GET", "images")

    async def launch_options(self) -> Any:
        """The service's launch form description (its policy, not this server's)."""
        return await self.http.call("GET", "launch-options")

    async def stats(self, ref: str) -> dict[str, Usage | None]:
        """Each container's resource use now, as the service reads it."""
        reply = await self.http.call("GET", f"sessions/{ref_path(ref)}/stats")
        return {
            host: None if found is None else Usage.from_dict(found)
            for host, found in reply["hosts"].items()
        }

    # -- inside the containers --------------------------------------------------------------

    async def access(self, ref: str) -> Access:
        """main1's SSH endpoint and the session's keys (the service gives them to the owner)."""
        return Access.from_dict(await self.http.call("GET", f"sessions/{ref_path(ref)}/access"))

    async def exec(
        self, ref: str, host: str, cmd: Sequence[str], *, on_output: OutputCallback | None = None
    ) -> int:
        """Run ``cmd`` as work in one container over SSH; its exit code."""
        if not cmd:
            raise InvalidRequest("give a command to run, e.g. -- hostname", "cmd")
        session = await self.get(ref)
        if session.status not in USABLE:
            raise InvalidRequest(f"session {session.name} is {session.status}, not running")
        session.locate(host)
        shell = ContainerShell(await self.access(session.id))
        try:
            with self.exec_log.running(session.id):
                return await shell.run(host, cmd, on_output=on_output)
        finally:
            await shell.close()

    # -- ending -----------------------------------------------------------------------------

    async def terminate(self, ref: str, reason: str = "") -> Session:
        """Cancel or terminate a session of the caller; the ended session."""
        session = await self.get(ref)
        await self.http.call("DELETE", f"sessions/{ref_path(session.id)}", reason=reason or None)
        return await self.get(session.id)

    # -- what the shared service's client does its own way (see engine.api.Engine) ---

    def launch_gate(self, settings: PolicySource) -> ServiceGate:
        """The service's launch policy applies (``settings`` are this server's: unused)."""
        return ServiceGate(self.launch_options)

    def main_route(self) -> SshRoute:
        """main1 is reached over SSH, with the access the service gives the owner."""
        return SshRoute(self.access)

    def upkeep(self, on_change: Callable[[], None]) -> builtins.list[Upkeep]:
        """None: the service keeps its own warm pool and OOM watch."""
        return []

    async def hand_off(self, session: Session, spawn: Callable[[str], int]) -> None:
        """Nothing to do: the service drives its launches itself."""

    def record_action(self, event: AuditEvent) -> None:
        """Nothing: the service records every request it serves (key handouts too)."""

    def mark_ending(self, session_id: str) -> bool:
        """False: the service ends sessions; terminate asks it in the foreground."""
        return False

    async def remove_subs(self, session_id: str) -> None:
        """Nothing: the service removes the containers when asked to terminate."""

    def phase_missing(self, session_id: str, phase: str) -> Session | None:
        """None: phase timings are the service's to record."""
        return None

    def record_phases(self, session_id: str, timings: Mapping[str, float]) -> None:
        """Nothing: phase timings are the service's to record."""
