"""Run every benchmark, print one table of all their rows, write bench/results/all.json.

Run as ``.venv/bin/python bench/run.py [--only scheduler,io] [--quick] [--repeat N]``.

Every ``bench/bench_*.py`` that exposes ``run(args)`` and ``parse_args(argv)`` is
a benchmark module: it is given ``--quick`` and ``--repeat N`` when those are
given here (each keeps its own defaults otherwise) and run in turn, each in its
own event loop. Modules without them (``bench_kernel_start.py``,
``bench_soak.py``: a table of their own, or a pass/fail verdict rather than rows)
are skipped, with a line saying how to run them; so are the modules of ``OPT_IN``
(``bench_multiagent.py``) unless ``--only`` names them. ``all.json`` holds every row, the
machine, the options, the date, and which modules ran, were skipped or failed; the
script exits with 1 if any failed (each module's own JSON is written only by its
own ``main``). A row that has a peer (gateway_provisioners beside ours, see
``harness.beside``) shows it in a last column; ``bench/readme_table.py`` then
rewrites the README's performance table from ``all.json``. The modules are imported
by name (``bench_scheduler``): running this script puts ``bench/`` first on
``sys.path``, as running any of them does.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import importlib
import os
import sys
import time
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any

from common import harness

HERE = Path(__file__).resolve().parent
#: Modules run only when named in ``--only`` (they need minutes of set-up), and why.
OPT_IN = {"multiagent": "starts two Docker-in-Docker agents first; run with --only multiagent"}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="modules to run, e.g. scheduler,io")
    parser.add_argument("--quick", action="store_true", help="each module's quick variant")
    parser.add_argument("--repeat", type=int, help="passed on to every module")
    return parser.parse_args(argv)


def discover(only: str) -> list[str]:
    """The names (``scheduler`` for bench_scheduler.py) of the modules to consider."""
    names = sorted(p.stem.removeprefix("bench_") for p in HERE.glob("bench_*.py"))
    if not only:
        return [n for n in names if n not in OPT_IN]
    wanted = [w.strip().removeprefix("bench_") for w in only.split(",") if w.strip()]
    unknown = [w for w in wanted if w not in names]
    if unknown:
        raise SystemExit(f"no benchmark called {', '.join(unknown)}; there are {', '.join(names)}")
    return wanted


def module_argv(args: argparse.Namespace) -> list[str]:
    """The options every module is given."""
    argv = ["--quick"] if args.quick else []
    return argv + (["--repeat", str(args.repeat)] if args.repeat else [])


def run_module(module: ModuleType, argv: list[str]) -> list[dict[str, Any]]:
    """One module's rows (its ``parse_args`` then ``run`` in a fresh event loop)."""
    options = module.parse_args(argv)
    return list(asyncio.run(module.run(options)))


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the modules, print the table, write all.json."""
    args = parse_args(argv)
    load_at_start = list(os.getloadavg()) if hasattr(os, "getloadavg") else []
    rows: list[dict[str, Any]] = []
    ran: dict[str, float] = {}
    skipped: dict[str, str] = {}
    failed: dict[str, str] = {}
    if not args.only:
        for name, why in OPT_IN.items():
            skipped[name] = why
            print(f"== {name}: skipped ({why})", flush=True)
    for name in discover(args.only):
        module = importlib.import_module(f"bench_{name}")
        if not (
            callable(getattr(module, "run", None)) and callable(getattr(module, "parse_args", None))
        ):
            skipped[name] = f"no run(args)/parse_args(); run .venv/bin/python bench/bench_{name}.py"
            print(f"== {name}: skipped ({skipped[name]})", flush=True)
            continue
        print(f"== {name}: running {' '.join(module_argv(args))}".rstrip(), flush=True)
        start = time.monotonic()
        try:
            rows += run_module(module, module_argv(args))
        except (Exception, SystemExit) as exc:  # one failing module must not hide the others
            traceback.print_exc()
            failed[name] = f"{type(exc).__name__}: {exc}"
            print(f"== {name}: FAILED ({failed[name]})", flush=True)
            continue
        ran[name] = round(time.monotonic() - start, 1)
        print(f"== {name}: done in {ran[name]} s", flush=True)
    print()
    harness.print_table(rows)
    extra = {
        "machine": {**harness.machine(), "load_average_at_start": load_at_start},
        "options": vars(args),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "modules": {"ran": ran, "skipped": skipped, "failed": failed},
    }
    path = harness.write_json("all" + ("_quick" if args.quick else ""), rows, extra)
    print(f"results written to {path}")
    if not args.quick:
        print("the README's table from it: .venv/bin/python bench/readme_table.py")
    for name, why in {**skipped, **failed}.items():
        print(f"{'FAILED' if name in failed else 'skipped'}: {name}: {why}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
