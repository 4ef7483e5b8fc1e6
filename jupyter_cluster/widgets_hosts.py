"""The launch form's hosts table: each container's status and live resource use.

:class:`HostsTable` is what :class:`jupyter_cluster.widgets.LaunchForm` shows once
its session runs: one row per container (host, role, agent, status, CPU %, memory
used / limit, its GPUs when it has some, a logs button) and a Terminate button.
While the session lives a background thread re-reads the session and one sample
of :meth:`~jupyter_cluster.session.ClusterSession.stats` every ``interval``
seconds (a sample takes about a second: Docker measures CPU over one) and updates
the rows, also while a cell of the notebook runs. It stops, leaving no thread,
when the session ends (however it ends), on :meth:`HostsTable.stop` and on
``close()``. While every view of the table is gone (its notebook was closed) it
reads no stats, only checks every :data:`UNWATCHED_CHECK` seconds whether the
session has ended, until a view shows again. :func:`row_cells` formats one row
(pure; its unit test needs no Docker).
"""

from __future__ import annotations

import html
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

import ipywidgets as w
from traitlets import Float

from .core.models import Container, Session
from .core.state import USABLE
from .core.stats import GpuUsage, Usage
from .core.units import format_size

if TYPE_CHECKING:
    from .session import ClusterSession

#: Widths of the columns: host and status, CPU, memory, GPU.
WIDTHS = ("22em", "6em", "12em", "14em")
#: Seconds between checks whether the session has ended while no view shows the table.
UNWATCHED_CHECK = 30.0
NONE = "–"  # noqa: RUF001 (an en dash: no figure)


class RowCells(NamedTuple):
    """The texts (HTML) of one container's row."""

    label: str
    cpu: str
    mem: str
    gpu: str


def row_cells(container: Container, usage: Usage | None) -> RowCells:
    """One container's row: ``main1 main on local: RUNNING`` (and why, when it is not
    running), CPU % of one CPU (200% is two busy, as ``docker stats``), memory used /
    its limit, and for a container given GPUs each GPU's utilization and memory (or
    why there are no figures). Without a sample (not running, or its agent did not
    answer) the figures are a dash."""
    label = (
        f"<code>{_esc(container.host)}</code> {_esc(container.role)} on "
        f"{_esc(container.agent)}: {_esc(container.status.value)}"
    )
    if container.status_reason:
        label += f" <small>({_esc(container.status_reason)})</small>"
    gpu = ""
    if container.gpu_ids:
        gpu = f"GPU {_esc(','.join(container.gpu_ids))}"
        if usage is not None and usage.gpus:
            gpu = "<br>".join(_gpu_text(g) for g in usage.gpus)
        elif usage is not None and usage.gpu_note:
            gpu += f" <small>({_esc(usage.gpu_note)})</small>"
    if usage is None:
        return RowCells(label, NONE, NONE, gpu)
    mem = f"{format_size(usage.mem_used)} / {format_size(usage.mem_limit)}"
    return RowCells(label, f"{usage.cpu_percent:.1f}%", mem, gpu)


def _gpu_text(gpu: GpuUsage) -> str:
    """``0: 35% 1g / 16g`` (utilization, memory used / total)."""
    util = NONE if gpu.util_percent is None else f"{gpu.util_percent:.0f}%"
    used, total = format_size(gpu.mem_used), format_size(gpu.mem_total)
    return f"{_esc(gpu.index)}: {util} {used} / {total}"


def _esc(text: object) -> str:
    return html.escape(str(text))


def _descendants(box: w.Box) -> list[w.Widget]:
    found: list[w.Widget] = []
    for child in box.children:
        if isinstance(child, w.Box):
            found += _descendants(child)
        found.append(child)
    return found


def _cells(gpus: bool) -> tuple[w.HTML, w.HTML, w.HTML, w.HTML]:
    """The cells of a row (host and status, CPU, memory, GPU); GPU shows only when
    the session has GPUs."""
    label, cpu, mem, gpu = (w.HTML(layout=w.Layout(width=width)) for width in WIDTHS)
    gpu.layout.display = None if gpus else "none"
    return label, cpu, mem, gpu


class _Row(w.HBox):
    """One container: its label, figures and logs button (cells by name)."""

    def __init__(self, host: str, on_logs: Callable[[str], Any], gpus: bool) -> None:
        self.host = host
        self.label, self.cpu, self.mem, self.gpu = _cells(gpus)
        self.logs = w.Button(description="logs", layout=w.Layout(width="6em"))
        self.logs.on_click(lambda _: on_logs(host))
        super().__init__([self.label, self.cpu, self.mem, self.gpu, self.logs])

    def show(self, cells: RowCells) -> None:
        self.label.value, self.cpu.value, self.mem.value, self.gpu.value = cells


class HostsTable(w.VBox):
    """The hosts of a running session with their live use (see the module)."""

    interval = Float(
        3.0, help="Seconds between readings of the containers' use while the session lives."
    )

    def __init__(
        self,
        session: ClusterSession,
        *,
        on_logs: Callable[[str], Any],
        on_terminate: Callable[[], Any],
        interval: float = 3.0,
    ) -> None:
        self.session = session
        gpus = any(c.gpu_ids for c in session.model.containers)
        self.rows = {c.host: _Row(c.host, on_logs, gpus) for c in session.model.containers}
        header = w.HBox(_cells(gpus))
        for cell, head in zip(
            header.children, ("host", "CPU", "memory used / limit", "GPU"), strict=True
        ):
            cell.value = f"<b>{head}</b>"
        self.note = w.HTML()
        self.terminate_button = w.Button(
            description="Terminate", button_style="danger", icon="stop"
        )
        self.terminate_button.on_click(lambda _: on_terminate())
        #: How many samples were shown (the refresh is alive while it grows).
        self.samples = 0
        self._stopping = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._seen = False  # a view of the table has been displayed
        # 0 asks the front end to count the views it shows (ipywidgets' _view_count).
        super().__init__(
            [header, *self.rows.values(), self.note, self.terminate_button], _view_count=0
        )
        self.interval = interval
        self.observe(self._on_views, names="_view_count")
        self.show(session.model, {})

    @property
    def polling(self) -> bool:
        """Whether the refresh thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def show(self, model: Session, found: Mapping[str, Usage | None]) -> None:
        """Show ``model``'s containers with the use ``found`` (host → sample)."""
        for c in model.containers:
            row = self.rows.get(c.host)
            if row is not None:
                row.show(row_cells(c, found.get(c.host)))

    def start(self) -> None:
        """Start refreshing (the form calls this once the session runs)."""
        if self.polling:
            return
        self._stopping.clear()
        self._thread = threading.Thread(
            target=self._run, name=f"cluster-usage-{self.session.name}", daemon=True
        )
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop refreshing and wait (up to ``timeout`` s) for the thread to end."""
        self._stopping.set()
        self._wake.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def close(self) -> None:
        """Stop refreshing, then close the table and every widget in it."""
        self.stop()
        for child in _descendants(self):
            child.close()
        super().close()

    def _on_views(self, change: dict[str, Any]) -> None:
        if (change["new"] or 0) > 0:
            self._seen = True
            self._wake.set()

    def _watched(self) -> bool:
        """Whether anyone may look: no view counted yet (a front end that does not
        count, or a script), or one on screen now."""
        return not self._seen or (self._view_count or 0) > 0

    def _run(self) -> None:
        while not self._stopping.is_set():
            watched = self._watched()
            if not self._sample(read_use=watched):
                return
            if watched:
                self._stopping.wait(self.interval)
            else:  # nobody looks: no stats, only now and then whether it has ended
                self._wake.wait(UNWATCHED_CHECK)
                self._wake.clear()

    def _sample(self, read_use: bool = True) -> bool:
        """Re-read the session and (with ``read_use``) one sample of its use, and
        show them; False when the session has ended (or the table is stopping) and
        the refresh must stop."""
        try:
            model = self.session.refresh()
            use = read_use and model.status in USABLE
            found = self.session.stats() if use else None
        except Exception as exc:  # shown, and tried again next time (it may have ended)
            self.note.value = f"<small>could not read the use: {_esc(exc)}</small>"
            return not self._stopping.is_set()
        if self._stopping.is_set():
            return False
        if model.status not in USABLE:
            self.show(model, {})
            self.note.value = (
                f"<small>session {_esc(model.name)} is {_esc(model.status.value)}: "
                "no more readings</small>"
            )
            return False
        if found is not None:
            self.show(model, found)
            self.samples += 1
            self.note.value = f"<small>use as of {time.strftime('%H:%M:%S')}</small>"
        return True
