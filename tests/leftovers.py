"""What a test run left on this machine's Docker engine: the first and last step of
``make test``.

Each test checks its own session's containers and networks; this catches what none
of them owns (a helper an engine left, a test agent, a volume). ``leftovers.py
before FILE`` notes the containers (running or not), networks and volumes whose
labels name jupyter-cluster (a developer's own sessions, say); ``leftovers.py after
FILE``, once every test has ended, prints those that were not there before with what
removes them, and exits 1 if there is any, 0 if not.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PREFIX = "jupyter-cluster"
#: What ``docker KIND ls`` lists, and the command that removes one.
KINDS = {
    "container": (["docker", "ps", "-a", "--no-trunc"], "docker rm -f"),
    "network": (["docker", "network", "ls", "--no-trunc"], "docker network rm"),
    "volume": (["docker", "volume", "ls"], "docker volume rm"),
}


def ours(labels: str) -> bool:
    """Whether a ``docker … ls`` Labels column names a label of ours."""
    return any(pair.strip().startswith(PREFIX) for pair in labels.split(","))


def left() -> dict[str, list[str]]:
    """Names of the containers, networks and volumes of ours, by kind."""
    found: dict[str, list[str]] = {}
    for kind, (argv, _) in KINDS.items():
        out = subprocess.run(
            [*argv, "--format", "{{json .}}"], capture_output=True, text=True, check=True
        ).stdout
        rows = [json.loads(line) for line in out.splitlines() if line.strip()]
        names = [
            row["Name"] if "Name" in row else row["Names"]
            for row in rows
            if ours(row.get("Labels", ""))
        ]
        if names:
            found[kind] = names
    return found


def main(step: str, noted: Path) -> int:
    """``before``: note what is there in ``noted``; ``after``: print what is new since
    and how to remove it; the exit code."""
    if step == "before":
        noted.write_text(json.dumps(left()))
        return 0
    there = json.loads(noted.read_text()) if noted.exists() else {}
    found = {
        kind: new
        for kind, names in left().items()
        if (new := [n for n in names if n not in there.get(kind, [])])
    }
    for kind, names in found.items():
        print(f"the tests left {len(names)} {kind}(s): {' '.join(names)}")
        print(f"  remove with: {KINDS[kind][1]} {' '.join(names)}")
    if not found:
        print("the tests left no container, network or volume of jupyter-cluster")
    return 1 if found else 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("before", "after"):
        sys.exit("usage: leftovers.py before|after FILE")
    sys.exit(main(sys.argv[1], Path(sys.argv[2])))
