"""The rows of the launch form's hosts table (#14 item 1): what each container's row
says, from the container and one sample of its use (no Docker, no kernel)."""

from __future__ import annotations

from jupyter_cluster.core.models import Container
from jupyter_cluster.core.state import ContainerStatus
from jupyter_cluster.core.stats import GpuUsage, Usage
from jupyter_cluster.widgets_hosts import RowCells, row_cells

MIB = 1 << 20
DASH = "–"  # noqa: RUF001


def container(host: str = "sub1", **changes: object) -> Container:
    base = Container(
        host=host,
        role="main" if host == "main1" else "sub",
        idx=1,
        local_rank=1,
        kernel_id="k",
        agent="local",
        status=ContainerStatus.RUNNING,
        container_id="c1",
    )
    return base.with_(**changes)


def usage(cpu: float = 47.25, used: int = 120 * MIB, limit: int = 256 * MIB) -> Usage:
    return Usage(cpu, used, limit, 1000, 200, 4096, 8192, 7, "2026-01-01T00:00:00Z")


def test_a_running_container_shows_cpu_and_memory_used_of_its_limit() -> None:
    assert row_cells(container(), usage()) == RowCells(
        "<code>sub1</code> sub on local: RUNNING", "47.2%", "120m / 256m", ""
    )
    # Two CPUs busy read as docker stats reads them; odd sizes keep two decimals.
    cells = row_cells(container("main1"), usage(cpu=200.0, used=5_662_310, limit=1 << 30))
    assert cells.label == "<code>main1</code> main on local: RUNNING"
    assert (cells.cpu, cells.mem) == ("200.0%", "5.4m / 1g")


def test_without_a_sample_the_figures_are_a_dash_and_the_reason_shows() -> None:
    dead = container(status=ContainerStatus.EXITED, status_reason="killed by the OOM killer <oom>")
    assert row_cells(dead, None) == RowCells(
        "<code>sub1</code> sub on local: EXITED <small>(killed by the OOM killer "
        "&lt;oom&gt;)</small>",
        DASH,
        DASH,
        "",
    )


def test_gpus_show_only_for_a_container_given_some() -> None:
    plain = usage()
    assert row_cells(container(), plain).gpu == ""
    given = container(gpu_ids=("0", "1"))
    assert row_cells(given, None).gpu == "GPU 0,1"
    read = plain.with_gpus(
        (GpuUsage("0", 35.0, 1024 * MIB, 16384 * MIB), GpuUsage("1", None, 0, 16384 * MIB)),
        "",
    )
    assert row_cells(given, read).gpu == f"0: 35% 1g / 16g<br>1: {DASH} 0 / 16g"
    unread = plain.with_gpus((), "no GPU figures: nvidia-smi is not available in the container")
    assert row_cells(given, unread).gpu == (
        "GPU 0,1 <small>(no GPU figures: nvidia-smi is not available in the container)</small>"
    )


def test_names_from_elsewhere_are_escaped() -> None:
    odd = container(host="sub1", agent="<b>agent</b>")
    assert row_cells(odd, usage()).label == (
        "<code>sub1</code> sub on local: RUNNING".replace("local", "&lt;b&gt;agent&lt;/b&gt;")
    )
