"""The Docker agent: the only place the engine speaks the Docker Engine API.

:mod:`.agent` is :class:`DockerAgent` (the :class:`~jupyter_cluster.engine.agents.
base.Agent` protocol over aiodocker); :mod:`.connection` opens and times the API
connection (TLS, timeouts), :mod:`.models` turns specs into Docker's JSON and back,
:mod:`.logs` decodes log streams, :mod:`.events` follows OOM events,
:mod:`.beside` runs a helper container next to another, :mod:`.images` pulls,
saves and loads images, :mod:`.info` reads ``docker info``, :mod:`.archive` packs
start-up files, :mod:`.gpus` and :mod:`.devices` find GPUs and RDMA devices. The agent registry
imports it lazily, so unit tests with the fake agent never load aiodocker.
"""
