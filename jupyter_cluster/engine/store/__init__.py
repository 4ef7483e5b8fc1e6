"""The engine's SQLite state: sessions and their history, placement, keys, drivers, execs.

One file per engine (``ClusterManager.db_path``), shared by every process of the
same user (CLI, server, detached drivers). :mod:`.sessions` is the :class:`Store`
the engine reads and writes; :mod:`.rows` maps rows to models, :mod:`.placing` is
the placing transaction, :mod:`.drivers` names the process driving a launch
(:mod:`.launch_records` keeps it, with the sessions' keys),
:mod:`.exec_log` records commands running in sessions, and :mod:`.sqlite_file`
opens a private shared SQLite file. Nothing here imports the rest of the engine.
"""
