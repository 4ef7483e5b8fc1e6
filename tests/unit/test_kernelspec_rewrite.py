"""A kernelspec rewritten while another process reads it (a server restarting beside
another of the same user's servers) is read whole, old or new, never cut."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from jupyter_cluster.provisioning.kernelspec import write_spec_dir


def test_a_reader_never_sees_a_half_written_kernelspec(tmp_path: Path) -> None:
    config = {"provisioner": {"config": {"size": 2, "image": "x" * 4000}}}
    write_spec_dir(str(tmp_path), "Cluster: first", config)
    done = threading.Event()
    broken: list[str] = []
    reads = 0

    def read() -> None:
        nonlocal reads
        while not done.is_set():
            text = (tmp_path / "kernel.json").read_text()
            reads += 1
            try:
                json.loads(text)
            except ValueError:
                broken.append(text[:80])

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for i in range(300):
            write_spec_dir(str(tmp_path), f"Cluster: {i}", config)
    finally:
        done.set()
        reader.join()
    assert reads > 0 and broken == [], (reads, broken[:3])
    assert json.loads((tmp_path / "kernel.json").read_text())["display_name"] == "Cluster: 299"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kernel.json", "logo-svg.svg"]
