"""Text output of the ``jupyter cluster`` CLI: tables and session details.

Pure formatting used by :mod:`.cli`; the JSON output is the models' ``to_dict``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from ..core.batch import job_summary
from ..core.lines import printable
from ..core.models import Session
from ..core.stats import Usage
from ..core.time_limits import format_duration
from ..core.units import format_size


def age(since: float, now: float | None = None) -> str:
    """``42s``, ``5m``, ``3h``, ``2d``: how long ago ``since`` was."""
    seconds = max(0, int((now or time.time()) - since))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Left-aligned columns separated by two spaces."""
    cells = [list(map(str, headers))] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    return "\n".join(lines)


def sessions_table(sessions: Sequence[Session]) -> str:
    """The ``ls`` listing."""
    if not sessions:
        return "no sessions (launch one with `jupyter cluster launch`)"
    rows = [
        (
            s.id[:8],
            s.name,
            s.status.value,
            s.spec.mode.value,
            s.spec.size,
            s.spec.image,
            age(s.created_at),
            job_summary(s.job, time.time()) or "-",
            printable(s.status_reason).splitlines()[0] if s.status_reason else "",
        )
        for s in sessions
    ]
    headers = ("ID", "NAME", "STATUS", "MODE", "SIZE", "IMAGE", "AGE", "JOB", "REASON")
    return table(headers, rows)


def session_details(session: Session) -> str:
    """The ``show`` / ``launch`` output."""
    spec = session.spec
    lines = [
        f"session   {session.id}",
        f"name      {session.name}",
        f"status    {session.status.value}"
        + (f" ({printable(session.status_reason)})" if session.status_reason else ""),
        f"mode      {spec.mode.value}, size {spec.size}",
        f"image     {spec.image}",
        f"each      {spec.resources.describe()}",
        f"mounts    {', '.join(map(str, spec.mounts)) or '-'}",
        f"group     {spec.resource_group}",
    ]
    if spec.bootstrap:
        lines.append(f"bootstrap {printable(spec.bootstrap)}")
    if spec.command:
        lines.append(f"command   {printable(spec.command)}")
        noun = "retry" if spec.retries == 1 else "retries"
        retries = f" (up to {spec.retries} {noun})" if spec.retries else ""
        lines.append(f"job       {job_summary(session.job, time.time())}{retries}")
    if spec.max_lifetime:
        lines.append(f"lifetime  at most {format_duration(spec.max_lifetime)}")
    if spec.env:  # names only: values may be secrets
        lines.append(f"env       {', '.join(name for name, _ in spec.env)}")
    if spec.apps:  # opened at the server's cluster/proxy/{session}/{port}/
        lines.append(f"apps      {', '.join(f'{n}={p}' for n, p in spec.apps)}")
    if session.timings:
        phases = ", ".join(f"{p} {v:.3f}" for p, v in session.timings.items())
        lines.append(f"timings   {phases} (s; total {sum(session.timings.values()):.3f})")
    rows = [
        (c.host, c.role, c.agent or "-", c.status.value, (c.container_id or "-")[:12], c.kernel_id)
        for c in session.containers
    ]
    lines += ["", table(("HOST", "ROLE", "AGENT", "STATUS", "CONTAINER", "KERNEL ID"), rows)]
    reasons = [(c.host, printable(c.status_reason)) for c in session.containers]
    lines += [f"{host}: {reason}" for host, reason in reasons if reason]
    return "\n".join(lines)


def gpu_cell(u: Usage) -> str:
    """A container's GPUs in one cell: ``0: 35% 1g / 16g`` for each (``?`` for a GPU that
    does not report its utilization), or ``-``."""
    if not u.gpus:
        return "-"
    return ", ".join(
        f"{g.index}: {'?' if g.util_percent is None else f'{g.util_percent:g}%'} "
        f"{format_size(g.mem_used)} / {format_size(g.mem_total)}"
        for g in u.gpus
    )


def usage_table(found: Mapping[str, Usage | None]) -> str:
    """The ``top`` table: each container's CPU, memory, network and block IO, and a
    GPU column (then the notes of containers whose GPUs could not be read) only
    when a container was given GPUs."""
    used = [u for u in found.values() if u is not None]
    gpus = any(u.gpus for u in used)
    rows = []
    for host, u in found.items():
        if u is None:
            rows.append((host, "-", "not running", "-", "-", "-", *(("-",) if gpus else ())))
            continue
        rows.append(
            (
                host,
                f"{u.cpu_percent:.1f}%",
                f"{format_size(u.mem_used)} / {format_size(u.mem_limit)}",
                f"{format_size(u.net_rx)} / {format_size(u.net_tx)}",
                f"{format_size(u.block_read)} / {format_size(u.block_write)}",
                str(u.pids),
                *((gpu_cell(u),) if gpus else ()),
            )
        )
    header = ("HOST", "CPU", "MEM USED / LIMIT", "NET IN / OUT", "BLOCK READ / WRITE", "PIDS")
    text = table((*header, *(("GPU: UTIL MEM USED / TOTAL",) if gpus else ())), rows)
    notes = [f"{host}: {u.gpu_note}" for host, u in found.items() if u is not None and u.gpu_note]
    return "\n".join([text, *notes])


def agents_table(rows: Sequence[dict[str, Any]]) -> str:
    """The ``agents`` listing: capacity, allocated and free per agent."""

    def res(d: dict[str, Any]) -> str:
        text = f"{d['cpu']:g} CPU / {format_size(max(int(d['mem']), 0))}"
        return text + (f" / {d['gpu']} GPU" if d.get("gpu") else "")

    def state(r: dict[str, Any]) -> str:
        if not r["reachable"]:
            return f"unavailable: {r['message']}"
        return f"available ({r['warning']})" if r.get("warning") else "available"

    text = table(
        ("AGENT", "GROUP", "CAPACITY", "ALLOCATED", "FREE", "SWARM", "STATE"),
        [
            (
                r["id"],
                r["resource_group"],
                res(r["capacity"]),
                res(r["allocated"]),
                res(r["free"]),
                r.get("swarm_role") or "-",
                state(r),
            )
            for r in rows
        ],
    )
    return "\n".join([text, *gpu_lines(rows)])


def gpu_lines(rows: Sequence[dict[str, Any]]) -> list[str]:
    """Under the ``agents`` table: each agent's GPUs (detected: id, model, memory;
    configured: ids) and why detection found none or not all."""
    lines = []
    for r in rows:
        found = r.get("gpus") or []
        if found:
            each = (f"{g['id']} {g['name']} {format_size(int(g['memory']))}" for g in found)
            lines.append(printable(f"{r['id']}: GPU " + ", ".join(each)))
        elif r.get("gpu_ids"):
            lines.append(f"{r['id']}: GPU {', '.join(r['gpu_ids'])} (configured)")
        if r.get("gpu_note"):
            lines.append(printable(f"{r['id']}: {r['gpu_note']}"))
    return lines
