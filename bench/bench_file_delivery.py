"""How start-up files reach N fresh containers: ``put_archive`` against a bind mount.

Run as ``.venv/bin/python bench/bench_file_delivery.py [--size 16] [--repeat 6]``.

A design measurement for issue #27 item 4 (the launch slope), not a goal
(``bench/run.py`` does not run it). Both sides are ``bench_launch.py``'s floor
without the kernel: a fresh network, ``--size`` bare containers created and
started concurrently, each running the image's sshd with a host key and root's
authorized key, timed until every sshd sends its banner. They differ in how the
two files get in:

- ``archive``: one ``PUT /containers/{id}/archive`` each before start, as the
  engine and the floor do (Docker extracts it into the container's layer);
- ``bind``: two read-only bind mounts of a host directory made once before the run
  (what only an agent on the engine's own host could use).

Alternating runs; prints the medians and ``bind/archive``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
import uuid
from typing import Any

from common.bare import SSHD, Made, bare_config, files_archive, floor_keys, sshd_answers
from common.constants import BENCH_LABEL, IMAGE


def host_copy(files: dict[str, bytes], root: str) -> list[dict[str, Any]]:
    """Write ``files`` under ``root`` (0700 directories, 0600 files) and return the
    bind mounts that show each file's directory at its path in the container."""
    mounts = []
    for directory in sorted({os.path.dirname(p) for p in files}):
        source = os.path.join(root, directory.strip("/").replace("/", "_"))
        os.makedirs(source, mode=0o700)
        mounts.append({"Type": "bind", "Source": source, "Target": directory, "ReadOnly": True})
    for path, data in files.items():
        local = os.path.join(root, os.path.dirname(path).strip("/").replace("/", "_"))
        fd = os.open(os.path.join(local, os.path.basename(path)), os.O_WRONLY | os.O_CREAT, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
    return mounts


async def launch(
    docker: Any, args: argparse.Namespace, way: str, files: dict[str, bytes], mounts: list
) -> float:
    """Seconds until ``args.size`` containers given ``files`` the ``way`` asked answer."""
    run_id = args.run_id or uuid.uuid4().hex[:12]
    made = Made()
    start = time.monotonic()
    try:
        network = f"jcbench-{run_id}"
        config = {"Name": network, "Labels": {BENCH_LABEL: run_id}}
        made.networks.append(await docker.networks.create(config))

        async def one(i: int) -> None:
            body = bare_config(
                args.image, run_id, f"h{i}", SSHD, network, 1.0, 256 << 20, (), "127.0.0.1"
            )
            if way == "bind":
                body["HostConfig"]["Mounts"] = mounts
            container = await docker.containers.create(body)
            made.containers.append(container)
            if way == "archive":
                await container.put_archive("/", files_archive(files))
            await container.start()
            found = await docker.containers.get(container.id)
            address = found._container["NetworkSettings"]["Networks"][network]["IPAddress"]
            await sshd_answers(address, 60)

        await asyncio.gather(*(one(i) for i in range(args.size)))
        return time.monotonic() - start
    finally:
        await made.remove()


async def measure(args: argparse.Namespace) -> dict[str, list[float]]:
    """Alternating runs (ABBA) of both ways after one untimed warm-up."""
    import aiodocker

    files, _ = floor_keys()
    times: dict[str, list[float]] = {"archive": [], "bind": []}
    docker = aiodocker.Docker()
    with tempfile.TemporaryDirectory() as root:
        mounts = host_copy(files, root)
        try:
            await launch(docker, args, "archive", files, mounts)
            for i in range(2 * args.repeat):
                way = ("archive", "bind")[(i + i // 2) % 2]
                times[way].append(await launch(docker, args, way, files, mounts))
                print(f"{way}: {times[way][-1]:.3f} s", file=sys.stderr)
        finally:
            await docker.close()
    return times


def main(argv: list[str] | None = None) -> int:
    """Measure and print both medians and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=16, help="containers per launch")
    parser.add_argument("--repeat", type=int, default=6, help="runs of each way")
    parser.add_argument("--image", default=IMAGE)
    parser.add_argument(
        "--run-id",
        default="",
        help="label value of this run's containers (default: a random one; a test names "
        "it to look for exactly what this run left)",
    )
    args = parser.parse_args(argv)
    times = asyncio.run(measure(args))
    medians = {way: statistics.median(t) for way, t in times.items()}
    for way, t in times.items():
        spread = f"{min(t):.3f}-{max(t):.3f}"
        print(f"{way:8} median {medians[way]:.3f} s ({spread} s, {len(t)} runs)")
    print(f"bind/archive {medians['bind'] / medians['archive']:.2f} at size {args.size}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
