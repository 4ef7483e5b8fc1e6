"""Files the engine puts into every container of a session before it starts.

``start.sh`` and ``sshd_config`` are package data; :mod:`.files` renders the
per-container set (keys, SSH config, known_hosts, environment, hostfile).
"""
