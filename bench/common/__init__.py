"""The benchmarks' library: everything in ``bench/`` that is not an entry script.

Every benchmark is one script, ``bench/bench_<name>.py`` (and ``bench/run.py`` runs
those that give rows); the scripts import only from this package (and, for the
gateway_provisioners comparison, from ``bench/gateway/``), never from each other.
They are run as ``.venv/bin/python bench/bench_<name>.py``, which puts ``bench/``
first on ``sys.path``, so ``from common import harness`` works with no path set-up;
the smoke tests run them the same way as subprocesses (the multi-host one imports
``bench_multiagent`` after prepending ``bench/`` to ``sys.path``).

Modules, by what they are for:

- :mod:`common.harness`: samples to rows (medians, ratios, goals), alternating runs,
  the table, the JSON, progress lines, a least-squares slope; every script.
- :mod:`common.constants`: the image, kernel ports, SSH port and Docker labels.
- :mod:`common.sandbox`: a run's private Jupyter dirs, its manager id, and finding
  and removing the Docker objects it made.
- :mod:`common.kernels`: cluster kernelspecs and kernel managers, and ours' side of
  a launch, a terminate and concurrent launches.
- :mod:`common.bare`: bare containers, the floors' building blocks (files, create
  body, connection file, removal, sshd and ``docker exec`` checks; aiodocker only).
- :mod:`common.floors`: the floors on the local engine (``bench_launch.py``,
  ``bench_warm.py``, ``bench_gateway.py``).
- :mod:`common.agents`: the floor and helpers on two Docker-in-Docker agents
  (``bench_multiagent.py``).
- :mod:`common.server`: a ``jupyter server`` subprocess with the extension, its
  config, JSON requests to it, and a process's RSS/threads/fds.
- :mod:`common.server_load`: stand-in sessions, SSE listeners and the events fan-out
  (``bench_io.py`` (g)).
- :mod:`common.logs`: log readers and the log throughput case (``bench_io.py`` (e)).
- :mod:`common.stats_cost`: CPU windows, stats followers and the ``docker stats``
  floor (``bench_stats.py``).
- :mod:`common.scheduler_workload`: the seeded queue and agents, the heap floor and
  the growth fit (``bench_scheduler.py``).
"""
