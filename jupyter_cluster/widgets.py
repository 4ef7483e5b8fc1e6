"""``LaunchForm``: an ipywidgets form to launch a cluster session from a notebook.

Built from the same launch-options schema the REST API serves
(:func:`jupyter_cluster.core.launch_form.describe`), so the notebook form, the
JupyterLab dialog and the server agree on fields, limits and defaults. Launching
goes through :mod:`jupyter_cluster.session` (the engine in this process); progress is
shown per container, then a table of hosts with their status, live resource use and
actions (:class:`~jupyter_cluster.widgets_hosts.HostsTable`, refreshed while the
session lives). Errors are shown in the form, never as tracebacks.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as w
from traitlets import Float

from . import session as notebook_api
from .core.launch_env import env_lines
from .core.launch_form import room_note
from .core.models import LaunchSpec
from .core.units import format_size
from .errors import ClusterError
from .widgets_hosts import HostsTable
from .widgets_profiles import picker
from .widgets_room import RoomLine

MODE_HELP = {
    "single-node": "All containers on one agent; waits (PENDING) until one agent has room.",
    "multi-node": "Spread over the group's agents when no single agent has room for all.",
}


def _esc(text: object) -> str:
    return html.escape(str(text))


class LaunchForm(w.VBox):
    """The launch form (display it, or ``%cluster launch``)."""

    usage_interval = Float(
        3.0, help="Seconds between readings of each container's use in the hosts table."
    )

    def __init__(
        self,
        schema: dict[str, Any] | None = None,
        agents: list[dict[str, Any]] | None = None,
        ask_engine: bool = True,
    ):
        """``ask_engine``: whether the line on room asks the engine's dry run."""
        self.schema = schema if schema is not None else notebook_api.launch_schema()
        self.agents = agents if agents is not None else notebook_api.agents()
        self.fields = {f["name"]: f for f in self.schema["fields"]}
        self.session: notebook_api.ClusterSession | None = None
        #: A chosen profile's fields the form has no widget for (see widgets_profiles).
        self.carried: dict[str, Any] = {}
        self.table: HostsTable | None = None
        d = self.schema["defaults"]
        f = self.fields
        style = {"description_width": "9em"}
        self.image = w.Dropdown(
            options=f["image"]["choices"], value=d["image"], description="Image", style=style
        )
        self.cpu = w.BoundedFloatText(
            value=float(d["cpu"]),
            min=f["cpu"]["minimum"],
            max=f["cpu"]["maximum"],
            step=0.5,
            description="CPU / container",
            style=style,
        )
        self.mem = w.Text(value=str(d["mem"]), description="Memory", style=style)
        self.shm = w.Text(value=str(d["shm"]), description="Shared memory", style=style)
        self.gpu = w.BoundedIntText(
            value=int(d["gpu"]),
            min=0,
            max=max(int(f["gpu"]["maximum"]), 0),
            description="GPU / container",
            style=style,
        )
        has_gpus = any(a.get("gpu_ids") for a in self.agents)
        self.gpu.layout.display = None if has_gpus else "none"
        self.mode = w.ToggleButtons(
            options=f["mode"]["choices"], value=d["mode"], description="Cluster mode", style=style
        )
        self.mode_help = w.HTML()
        self.size = w.BoundedIntText(
            value=int(d["size"]),
            min=1,
            max=f["size"]["maximum"],
            description="Cluster size",
            style=style,
        )
        self.mounts = w.SelectMultiple(
            options=f["mounts"]["choices"],
            value=tuple(d.get("mounts") or ()),
            description="Data folders",
            style=style,
            rows=min(4, max(1, len(f["mounts"]["choices"]))),
        )
        self.group = w.Dropdown(
            options=f["resource_group"]["choices"],
            value=d["resource_group"],
            description="Resource group",
            style=style,
        )
        self.bootstrap = w.Text(
            value=d.get("bootstrap") or "",
            description="Bootstrap",
            style=style,
            placeholder="shell command run in every container",
        )
        self.command = w.Text(
            value=d.get("command") or "",
            description="Batch command",
            style=style,
            placeholder="run in main1; the session ends when it exits (empty: interactive)",
        )
        self.lifetime = w.Text(
            value=str(d.get("max_lifetime") or ""),
            description="Max lifetime",
            style=style,
            placeholder="e.g. 30m, 2h (empty: no limit)",
        )
        # Values may be secrets: typed here, sent with the launch, then cleared.
        self.env = w.Textarea(
            value="".join(f"{k}={v}\n" for k, v in (d.get("env") or {}).items()),
            description="Environment",
            style=style,
            placeholder="KEY=VALUE, one a line",
            rows=2,
        )
        self.total = w.HTML()
        self.room = RoomLine(self.total, ask=ask_engine)
        self.error = w.HTML()
        self.launch_button = w.Button(description="Launch", button_style="primary", icon="rocket")
        self.launch_button.on_click(lambda _: self.launch())
        self.progress = w.HTML()
        self.hosts = w.VBox()
        self.log_output = w.Output()
        for widget in (self.cpu, self.mem, self.shm, self.gpu, self.mode, self.size, self.group):
            widget.observe(lambda _: self._update(), names="value")
        profiles = self.schema.get("profiles") or []
        self.profile = picker(self, profiles, style)
        self.profile.layout.display = None if profiles else "none"
        super().__init__(
            [
                self.profile,
                self.image,
                self.cpu,
                self.mem,
                self.shm,
                self.gpu,
                self.mode,
                self.mode_help,
                self.size,
                self.mounts,
                self.group,
                self.bootstrap,
                self.command,
                self.lifetime,
                self.env,
                self.total,
                self.error,
                self.launch_button,
                self.progress,
                self.hosts,
                self.log_output,
            ]
        )
        self._update()

    # -- form state ----------------------------------------------------------------

    def values(self) -> dict[str, Any]:
        """The launch fields as entered (strings for sizes, like the CLI), on top of
        a chosen profile's that the form has no widget for."""
        return {
            **self.carried,
            "image": self.image.value,
            "size": self.size.value,
            "mode": self.mode.value,
            "cpu": self.cpu.value,
            "mem": self.mem.value,
            "shm": self.shm.value,
            "gpu": self.gpu.value,
            "mounts": list(self.mounts.value),
            "resource_group": self.group.value,
            "bootstrap": self.bootstrap.value or None,
            "command": self.command.value or None,
            "max_lifetime": self.lifetime.value.strip() or None,
            "env": env_lines(self.env.value) or None,
        }

    def spec(self) -> LaunchSpec:
        """The validated spec; raises InvalidRequest naming the wrong field."""
        return notebook_api.engine().make_spec(**self.values())

    def _update(self) -> None:
        self.mode_help.value = f"<small>{_esc(MODE_HELP.get(self.mode.value, ''))}</small>"
        try:
            spec = self.spec()
        except ClusterError as exc:
            self.room.update(None)
            self._show_error(exc)
            self.launch_button.disabled = True
            return
        self.error.value = ""
        self.launch_button.disabled = False
        per, n = spec.resources, spec.size
        total = per.times(n)
        gpu = f", {total.gpu} GPU" if total.gpu else ""
        head = (
            f"Total: {n} × ({_esc(per.describe())}) = <b>{total.cpu:g} CPU, "  # noqa: RUF001
            f"{format_size(total.mem)} memory{gpu}</b>; "
        )
        estimate = room_note(self.agents, self.group.value, per, n, self.mode.value)
        self.room.update(spec, head, estimate)

    def _show_error(self, exc: ClusterError) -> None:
        self.error.value = f"<span style='color:var(--jp-error-color1,#c00)'>{_esc(exc)}</span>"

    # -- launching ---------------------------------------------------------------------

    def _show_progress(self, session: Any) -> None:
        reason = f" ({_esc(session.status_reason)})" if session.status_reason else ""
        states = " ".join(f"{_esc(c.host)}: {_esc(c.status.value)}" for c in session.containers)
        self.progress.value = (
            f"<b>{_esc(session.name)}</b> {_esc(session.status.value)}{reason}<br>{states}"
        )

    def launch(self) -> notebook_api.ClusterSession | None:
        """Launch with the form's values; shows progress, then the hosts table."""
        self.launch_button.disabled = True
        try:
            spec = self.spec()
            self.session = notebook_api.ClusterSession.launch_spec(
                spec, on_change=self._show_progress
            )
        except ClusterError as exc:
            self._show_error(exc)
            self.launch_button.disabled = False
            return None
        self.env.value = ""  # not kept in the notebook's widget state
        self._show_progress(self.session.model)
        self._show_hosts()
        self._refresh_room()
        return self.session

    def _refresh_room(self) -> None:
        """Re-read the agents' free resources (they change as sessions come and go)."""
        self.agents = notebook_api.agents()
        self._update()

    def _show_hosts(self) -> None:
        """The hosts table of the launched session, refreshing its use from now on."""
        assert self.session is not None
        self._close_table()
        self.table = HostsTable(
            self.session,
            on_logs=self.show_logs,
            on_terminate=self.terminate,
            interval=self.usage_interval,
        )
        self.hosts.children = [self.table]
        self.table.start()

    def _close_table(self) -> None:
        if self.table is not None:
            self.table.close()
            self.table = None
        self.hosts.children = []

    def show_logs(self, host: str, tail: int = 200) -> str:
        """Show the last ``tail`` lines of a container's log below the form."""
        assert self.session is not None
        try:
            text = self.session.logs(host, tail=tail)
        except ClusterError as exc:
            text = f"error: {exc}"
        # Set as the widget's state (not printed under ``with``): it then shows in any
        # front end, also one that was not capturing when the button was pressed.
        self.log_output.outputs = (
            {"output_type": "stream", "name": "stdout", "text": f"--- {host} ---\n{text}"},
        )
        return text

    def terminate(self) -> None:
        """Terminate the launched session."""
        if self.session is None:
            return
        try:
            ended = self.session.terminate()
            self._close_table()
            self._show_progress(ended)
            self._refresh_room()
        except ClusterError as exc:
            self._show_error(exc)
        self.launch_button.disabled = False

    def close(self) -> None:
        """Close the form; the hosts table stops refreshing (the session stays)."""
        self._close_table()
        super().close()
