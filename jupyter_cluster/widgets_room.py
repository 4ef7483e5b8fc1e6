"""The notebook launch form's word on room: its own estimate at once, then the engine's.

:class:`~jupyter_cluster.widgets.LaunchForm` calls :meth:`RoomLine.update` at each
change of its values, with the values' spec and the estimate from the agents' free
resources (:func:`~jupyter_cluster.core.launch_form.room_note`). The estimate is shown
at once; the engine's dry run of the launch (``ClusterManager.check``, or the team's
service), asked on the engine's own loop so that the kernel never waits for it,
replaces it when it answers for values still shown: where the session would start,
why it would wait (its place in the queue), or why it would be refused (the user's
limits, a folder, a name in use). No answer (an agent or the service down) leaves
the estimate.
"""

from __future__ import annotations

import html
import threading
from concurrent.futures import Future
from functools import partial
from typing import Any

from . import session as notebook_api
from .background_engine import BackgroundEngine
from .core.launch_check import LaunchCheck
from .core.models import LaunchSpec
from .errors import Conflict, InvalidRequest, NotFound


class RoomLine:
    """Shows in ``total`` (an HTML widget: the form's total, then its word on room)
    what a launch of the form's values would meet.

    ``ask``: whether to ask the engine at all (a form given its agents by a test
    shows the estimate only)."""

    def __init__(self, total: Any, ask: bool = True) -> None:
        self.total = total
        self.ask = ask
        self._spec: LaunchSpec | None = None
        self._head = ""
        # An answer shown for values no longer in the form would stay until the next.
        self._lock = threading.Lock()
        #: The engine's answer shown last (for tests and the form's readers).
        self.answer: str | None = None

    def update(self, spec: LaunchSpec | None, head: str = "", estimate: str = "") -> None:
        """Show ``head`` (the total, HTML) and ``estimate`` for ``spec``, or nothing while
        a value is wrong (``spec`` None); then ask the engine."""
        with self._lock:
            self._spec, self._head = spec, head
            self.answer = None
            self._show(estimate)
        if spec is None or not self.ask:
            return
        asked = BackgroundEngine.get().submit(notebook_api.dry_run(spec))
        asked.add_done_callback(partial(self._answered, spec))

    def _answered(self, spec: LaunchSpec, asked: Future[LaunchCheck]) -> None:
        """Called on the engine's loop: show the answer if the values are still ``spec``."""
        if asked.cancelled():
            return
        try:
            text = asked.result().describe()
        except (InvalidRequest, NotFound, Conflict) as exc:
            text = f"would be refused: {exc}"
        except Exception:  # no answer: the estimate stays
            return
        with self._lock:
            if spec is self._spec:
                self.answer = text
                self._show(text)

    def _show(self, text: str) -> None:
        self.total.value = f"{self._head}{html.escape(text)}" if self._spec else ""
