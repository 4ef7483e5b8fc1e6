"""The launch form's hosts table shows each container's live use, on real Docker (#14).

A plain kernel (its own engine, on the test's workspace) builds a ``LaunchForm`` and
launches size 2 through its Launch button. The hosts table must then show a CPU
figure and memory used / limit for main1 and sub1, refreshed from its own thread
while cells run (a busy loop in sub1 shows as sub1's CPU rising), and the refresh
must stop, leaving no thread, however it ends: the Terminate button, the session
ended from elsewhere (the CLI), and the form closed while the session still runs.
"""

from __future__ import annotations

import json
import re
import textwrap
from typing import Any

import pytest
from jupyter_client.asynchronous import AsyncKernelClient

from tests.support.docker import session_objects
from tests.support.kernels import ok_cell

from .notebook_support import local_kernel
from .support import Workspace

pytestmark = pytest.mark.docker

#: Helpers defined in the kernel: waiting within a cell, the table's figures, the
#: refresh threads alive, a launch through the form that waits for two samples.
HELPERS = textwrap.dedent(
    """
    import json, threading, time
    from jupyter_cluster.widgets import LaunchForm

    def wait(ok, seconds=60):
        deadline = time.monotonic() + seconds
        while not ok() and time.monotonic() < deadline:
            time.sleep(0.2)
        return bool(ok())

    def cpu(table, host):
        text = table.rows[host].cpu.value
        return float(text[:-1]) if text.endswith('%') else None

    def refreshers():
        return sorted(t.name for t in threading.enumerate()
                      if t.name.startswith('cluster-usage-'))

    def launch():
        form.launch_button.click()
        table = form.table
        ok = wait(lambda: table.samples >= 2
                  and all(cpu(table, h) is not None for h in table.rows))
        return table, ok

    def say(*values):
        print(json.dumps(values))

    form = LaunchForm()
    form.usage_interval = 1.0
    form.size.value = 2
    form.cpu.value = 0.5
    form.mem.value = '256m'
    """
)

BUSY = "nohup timeout 90 sh -c 'while :; do :; done' >/dev/null 2>&1 &"


async def said(kc: AsyncKernelClient, code: str) -> list[Any]:
    """Run ``code`` (which ends with ``say(...)``) in the kernel; what it said."""
    cell = await ok_cell(kc, code)
    values: list[Any] = json.loads(cell.stdout)
    return values


async def test_hosts_table_shows_live_use_until_the_session_ends(ws: Workspace) -> None:
    async with local_kernel(ws) as (_km, kc):
        await ok_cell(kc, HELPERS)

        # Launched through the form: a CPU figure and memory for main1 and sub1.
        session_id, name, ok, threads = await said(
            kc, "table, ok = launch()\nsay(form.session.id, form.session.name, ok, refreshers())"
        )
        assert ok and threads == [f"cluster-usage-{name}"]
        ws.sh(session_id, "sub1", BUSY)
        busy, rows = await said(
            kc,
            "busy = wait(lambda: (cpu(table, 'sub1') or 0) >= 20)\n"
            "say(busy, {h: [r.label.value, r.cpu.value, r.mem.value]"
            " for h, r in table.rows.items()})",
        )
        assert busy, rows  # the busy loop of sub1 (limit 0.5 CPU) shows
        assert rows["main1"][0] == "<code>main1</code> main on local: RUNNING"
        assert rows["sub1"][0] == "<code>sub1</code> sub on local: RUNNING"
        assert float(rows["main1"][1].rstrip("%")) < float(rows["sub1"][1].rstrip("%"))
        for host in ("main1", "sub1"):
            assert re.fullmatch(r"\d+(\.\d+)?[kmg]? / 256m", rows[host][2]), rows

        # Terminate through the table: no thread is left and no sample comes any more.
        polling, more, threads, table_gone = await said(
            kc,
            "form.table.terminate_button.click()\nn = table.samples\ntime.sleep(3)\n"
            "say(table.polling, table.samples - n, refreshers(), form.table is None)",
        )
        assert (polling, more, threads, table_gone) == (False, 0, [], True)
        assert session_objects(session_id) == ([], [])

        # Ended from elsewhere: the table notices, says so and stops by itself.
        second, ok = await said(kc, "table, ok = launch()\nsay(form.session.id, ok)")
        assert ok
        ws.ok_cli("rm", second)
        stopped, note, threads, figures = await said(
            kc,
            "stopped = wait(lambda: not table.polling, 30)\n"
            "say(stopped, table.note.value, refreshers(),"
            " [r.cpu.value for r in table.rows.values()])",
        )
        assert stopped and threads == [], (note, threads)
        # it may stop as soon as it sees the session TERMINATING
        assert re.search(r"is TERMINAT(ING|ED): no more readings", note), note
        assert figures == ["–", "–"]  # noqa: RUF001

        # The form closed while its session runs: the refresh ends, the session stays.
        third, ok = await said(kc, "table, ok = launch()\nsay(form.session.id, ok)")
        assert ok
        polling, threads, status = await said(
            kc, "form.close()\nsay(table.polling, refreshers(), form.session.status.value)"
        )
        assert (polling, threads, status) == (False, [], "RUNNING")
        await ok_cell(kc, "form.session.terminate()")
        assert session_objects(third) == ([], [])
    assert ws.docker_objects() == ([], [])
