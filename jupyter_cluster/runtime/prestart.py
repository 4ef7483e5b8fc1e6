"""An ipykernel interpreter started ahead in a warm ``main1``, waiting for its kernel.

Copied into every warm main1 by the warm pool (engine/warm_pool.py) and started as
``work`` by the container's waiting command, before any session exists. It imports
ipykernel (most of a kernel's start-up time), then blocks on a FIFO that only
``work`` can open. When a session takes the container, the kernel's start-up
(provisioning/process.py) writes one JSON message there: the kernel's argv, its
environment, its connection file's path and text, the pid file and the log FIFO.
This process then becomes that kernel, exactly as ``python3 -Xfrozen_modules=off -m
ipykernel_launcher`` would have (it is started with that option): nothing of it
existed before the session (no connection key, no session environment, no user
code). It serves one kernel; a restart starts a new process the usual way. Runs
inside containers (python3 only, no jupyter_cluster).
"""

import json
import os
import sys
import time

RUN = "/run/jupyter-cluster-kernel"
FIFO = RUN + "/go"
READY = "jupyter-cluster: kernel interpreter ready"
NOT_READY = "jupyter-cluster: no kernel interpreter ahead"
#: ipykernel's variable for its launcher (core/kernel_command.py's PARENT_ENV).
PARENT_ENV = "JPY_PARENT_PID"


def main() -> None:
    """Import ahead, wait for the handoff, run the kernel."""
    os.setsid()  # the kernel leads its own process group, like an exec'd one
    # ipykernel reads this as it is imported, and the kernel's environment has it too
    # (core/kernel_command.py's kernel_env): launched by a manager, so no note for a
    # terminal.
    os.environ[PARENT_ENV] = "1"
    try:
        from ipykernel import kernelapp  # the slow part, done ahead
    except Exception as exc:  # kernels will start the usual way (and say why)
        print(f"{NOT_READY}: {exc}", flush=True)
        return
    with open(RUN + "/pid", "w") as f:  # ready: the handoff checks this process lives
        f.write(f"{os.getpid()}\n")
    print(READY, flush=True)  # the container's log: the pool waits for this line

    with open(FIFO) as fifo:
        message = json.load(fifo)
    os.unlink(FIFO)  # one kernel only: a restart goes the usual way
    os.environ.update(message["env"])  # on the image's, as docker exec would
    sys.path[:0] = [p for p in message["env"].get("PYTHONPATH", "").split(":") if p]
    os.chdir(message["cwd"])
    for _ in range(1500):  # the start-up script's log FIFO (as the usual wrapper waits)
        if os.path.exists(message["log"]):
            break
        time.sleep(0.02)
    log = os.open(message["log"], os.O_WRONLY | os.O_APPEND)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    with open(message["pid_file"], "w") as f:
        f.write(f"{os.getpid()}\n")
    old = os.umask(0o077)
    with open(message["connection_file"], "w") as f:
        f.write(message["connection"])
    os.umask(old)
    argv = message["argv"]  # python3 [options] -m ipykernel_launcher ARGS
    sys.argv = ["ipykernel_launcher", *argv[argv.index("ipykernel_launcher") + 1 :]]
    kernelapp.launch_new_instance()


if __name__ == "__main__":
    main()
