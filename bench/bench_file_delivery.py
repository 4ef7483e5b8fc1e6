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
  (what only an agent on the engine's own host could use);
- ``volume``: what the engine does for a session on one agent (see
  ``jupyter_cluster/engine/launch/shared_files.py``): a fresh volume, one
  ``put_archive`` into the first container carrying the others' files in it, the
  others mounting it read-only and copying their files into place (``cp -a``) before
  sshd starts, once the first's copy is done.

Alternating runs; prints the medians, ``bind/archive`` and ``volume/archive``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from typing import Any

from common.bare import SSHD, Made, bare_config, files_archive, floor_keys, sshd_answers
from common.constants import BENCH_LABEL, IMAGE
from common.sandbox import add_run_id

#: The ways measured, the first the reference.
WAYS = ("archive", "bind", "volume")
#: Where the ``volume`` way mounts its volume.
CARRIED = "/opt/bench-files"


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
    run_id = args.run_id
    made = Made()
    volume = None
    start = time.monotonic()
    try:
        network = f"jcbench-{run_id}"
        config = {"Name": network, "Labels": {BENCH_LABEL: run_id}}
        made.networks.append(await docker.networks.create(config))
        if way == "volume":
            labels = {BENCH_LABEL: run_id}
            volume = await docker.volumes.create({"Name": network, "Labels": labels})
        carried = asyncio.Event()

        async def one(i: int) -> None:
            script = f"cp -a {CARRIED}/. / && {SSHD}" if way == "volume" and i else SSHD
            body = bare_config(
                args.image, run_id, f"h{i}", script, network, 1.0, 256 << 20, (), "127.0.0.1"
            )
            if way == "bind":
                body["HostConfig"]["Mounts"] = mounts
            if way == "volume":
                mount = {"Type": "volume", "Source": network, "Target": CARRIED}
                body["HostConfig"]["Mounts"] = [{**mount, "ReadOnly": bool(i)}]
            container = await docker.containers.create(body)
            made.containers.append(container)
            if way == "archive":
                await container.put_archive("/", files_archive(files))
            elif way == "volume" and not i:
                both = {**files, **{CARRIED + path: data for path, data in files.items()}}
                await container.put_archive("/", files_archive(both))
                carried.set()
            elif way == "volume":
                await carried.wait()
            await container.start()
            found = await docker.containers.get(container.id)
            address = found._container["NetworkSettings"]["Networks"][network]["IPAddress"]
            await sshd_answers(address, 60)

        await asyncio.gather(*(one(i) for i in range(args.size)))
        return time.monotonic() - start
    finally:
        await made.remove()
        if volume is not None:
            await volume.delete()


async def measure(args: argparse.Namespace) -> dict[str, list[float]]:
    """Alternating runs (ABC, CBA, …) of every way after one untimed warm-up."""
    import aiodocker

    files, _ = floor_keys()
    times: dict[str, list[float]] = {way: [] for way in WAYS}
    docker = aiodocker.Docker()
    with tempfile.TemporaryDirectory() as root:
        mounts = host_copy(files, root)
        try:
            await launch(docker, args, "archive", files, mounts)
            for i in range(args.repeat):  # ABC, CBA, …
                for way in WAYS if i % 2 == 0 else WAYS[::-1]:
                    times[way].append(await launch(docker, args, way, files, mounts))
                    print(f"{way}: {times[way][-1]:.3f} s", file=sys.stderr)
        finally:
            await docker.close()
    return times


def main(argv: list[str] | None = None) -> int:
    """Measure and print every way's median and its ratio to ``archive``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=16, help="containers per launch")
    parser.add_argument("--repeat", type=int, default=6, help="runs of each way")
    parser.add_argument("--image", default=IMAGE)
    add_run_id(parser)
    args = parser.parse_args(argv)
    times = asyncio.run(measure(args))
    medians = {way: statistics.median(t) for way, t in times.items()}
    for way, t in times.items():
        spread = f"{min(t):.3f}-{max(t):.3f}"
        print(f"{way:8} median {medians[way]:.3f} s ({spread} s, {len(t)} runs)")
    for way in WAYS[1:]:
        ratio = medians[way] / medians["archive"]
        print(f"{way}/archive {ratio:.2f} at size {args.size}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
