"""Names, labels and the environment of a cluster session's containers.

Pure: given a session, says what each container is called, which labels it and its
network carry (so a restarted manager can find them), the ``BACKENDAI_*``
environment (with how many GPUs the container holds), and the MPI-style hostfile.
Used by the manager when it creates containers and by reconciliation when it reads
them back.
"""

from __future__ import annotations

import re

from .gpus import gpu_env
from .models import Container, Session

#: The image sessions use when none is given (built by ``jupyter cluster image build``).
DEFAULT_IMAGE = "jupyter-cluster/kernel:latest"
LABEL_PREFIX = "jupyter-cluster."
LABEL_SESSION = LABEL_PREFIX + "session-id"
LABEL_KERNEL = LABEL_PREFIX + "kernel-id"
LABEL_HOST = LABEL_PREFIX + "host"
LABEL_ROLE = LABEL_PREFIX + "role"
LABEL_MANAGER = LABEL_PREFIX + "manager-id"
LABEL_SESSION_NAME = LABEL_PREFIX + "session-name"
LABEL_MODE = LABEL_PREFIX + "mode"
LABEL_SIZE = LABEL_PREFIX + "size"
#: On the warm pool's containers (value: their shape) and networks ("network").
LABEL_WARM = LABEL_PREFIX + "warm"

SSH_PORT = 2200
#: The first container's host name: where the kernel runs, and the host commands go
#: to when none is named (``exec``, ``ssh``, ``logs``).
MAIN_HOST = "main1"
#: Container ports main1 always publishes for a kernel (shell, iopub, stdin, control, hb).
KERNEL_PORTS = (50001, 50002, 50003, 50004, 50005)
READY_MARKER = "jupyter-cluster: ready"
#: Lines of the start-up script that mean the container will not become ready.
FAILED_MARKERS = ("jupyter-cluster: error", "jupyter-cluster: bootstrap failed")
HOSTFILE_PATH = "/home/config/hostfile"
#: Where Backend.AI keeps the cluster's SSH key pair (``id_cluster``, ``id_cluster.pub``):
#: scripts that pass ``-i`` with that path work unchanged.
BACKENDAI_SSH_DIR = "/home/config/ssh"
RUNTIME_DIR = "/opt/jupyter-cluster"
#: work's folder in RUNTIME_DIR: the kernel's pid and connection files, and the FIFO
#: (LOG_FIFO) through which what the kernel prints reaches the container's log.
RUN_DIR = RUNTIME_DIR + "/run"
LOG_FIFO = RUN_DIR + "/log.fifo"
#: On the kernel's PYTHONPATH: holds the in-container ``jupyter_cluster`` magic package.
PYTHON_DIR = RUNTIME_DIR + "/python"
#: Where a warm main1's pre-started kernel interpreter waits (runtime/prestart.py).
PRESTART_DIR = "/run/jupyter-cluster-kernel"
WORK_USER = "work"
#: work's uid and gid unless ``ContainerHardening.work_uid`` says otherwise; the
#: start-up script reads the one a container must use from WORK_UID_FILE.
WORK_UID = 1000
WORK_UID_FILE = RUNTIME_DIR + "/work-uid"
#: The container's environment as SSH sessions get it (``~/.ssh/environment`` links
#: here), written by the start-up script from its own.
SSH_ENVIRONMENT = RUNTIME_DIR + "/ssh-environment"
WORK_HOME = "/home/work"
#: Where a session's start-up-files volume is mounted (see engine/launch/shared_files).
SHARED_FILES_DIR = "/opt/jupyter-cluster-files"


def hosts(size: int) -> list[str]:
    """Host names of a session of ``size``: ``main1, sub1 … sub(size-1)``."""
    return ["main1"] + [f"sub{i}" for i in range(1, size)]


def plan_containers(session_id: str, size: int) -> tuple[Container, ...]:
    """The containers of a new session, not yet placed: roles, indices, kernel ids.

    ``main1``'s kernel id is the session id (Backend.AI's rule); the others are
    fresh UUIDs.
    """
    import uuid  # here: the CLI's listing commands never plan containers

    planned = []
    for rank, host in enumerate(hosts(size)):
        role = "main" if rank == 0 else "sub"
        planned.append(
            Container(
                host=host,
                role=role,
                idx=1 if rank == 0 else rank,
                local_rank=rank,
                kernel_id=session_id if rank == 0 else str(uuid.uuid4()),
            )
        )
    return tuple(planned)


def replicas(session: Session) -> str:
    """``main:1,sub:N`` for BACKENDAI_CLUSTER_REPLICAS."""
    subs = sum(1 for c in session.containers if c.role == "sub")
    return f"main:1,sub:{subs}" if subs else "main:1"


def cluster_env(session: Session, container: Container) -> dict[str, str]:
    """The ten ``BACKENDAI_*`` variables of one container, exactly as DESIGN.md says."""
    return {
        "BACKENDAI_CLUSTER_HOST": container.host,
        "BACKENDAI_CLUSTER_HOSTS": ",".join(session.hosts),
        "BACKENDAI_CLUSTER_IDX": str(container.idx),
        "BACKENDAI_CLUSTER_MODE": session.spec.mode.value,
        "BACKENDAI_CLUSTER_ROLE": container.role,
        "BACKENDAI_CLUSTER_SIZE": str(session.spec.size),
        "BACKENDAI_CLUSTER_REPLICAS": replicas(session),
        "BACKENDAI_CLUSTER_LOCAL_RANK": str(container.local_rank),
        "BACKENDAI_KERNEL_ID": container.kernel_id,
        "BACKENDAI_SESSION_ID": session.id,
    }


def backendai_env(session: Session, container: Container) -> dict[str, str]:
    """Backend.AI's other session variables that scripts read: its session name, its
    user's name, the container's image, and its pre-opened ports: those of the apps
    declared at launch (``--app NAME=PORT``, reached through the app proxy), in their
    order, as Backend.AI lists the ports a user asked to have opened."""
    return {
        "BACKENDAI_SESSION_NAME": session.name,
        "BACKENDAI_USER_NAME": session.owner,
        "BACKENDAI_KERNEL_IMAGE": session.spec.image,
        "BACKENDAI_PREOPEN_PORTS": ",".join(str(port) for _, port in session.spec.apps),
    }


def container_env(session: Session, container: Container) -> dict[str, str]:
    """Everything set in a container's environment: the cluster variables, Backend.AI's
    other session variables, its GPU count (``GPU_COUNT``, ``N_GPUS``), plus user basics,
    then the user's launch variables (reserved names only when a site allows them).

    Docker puts them over the image's own, which stay: PATH and LANG are not among
    them (unless a user sets them, where allowed), so an image that keeps python3 or
    its tools elsewhere (``ENV PATH=/opt/conda/bin:$PATH``) finds them in the kernel,
    ``exec`` and SSH, and an image's locale is its own."""
    return {
        **cluster_env(session, container),
        **backendai_env(session, container),
        **gpu_env(len(container.gpu_ids)),
        "HOME": WORK_HOME,
        "USER": WORK_USER,
        "LOGNAME": WORK_USER,
        "JUPYTER_CLUSTER_HOSTFILE": HOSTFILE_PATH,
        **dict(session.spec.env),
    }


def hostfile(session: Session) -> str:
    """An MPI-style hostfile: one line per host, main1 first; a host holding GPUs
    says ``slots=N`` (its GPU count), so ``mpirun`` starts one rank per GPU."""
    return "".join(
        f"{c.host} slots={len(c.gpu_ids)}\n" if c.gpu_ids else f"{c.host}\n"
        for c in session.containers
    )


def container_labels(session: Session, container: Container, manager_id: str) -> dict[str, str]:
    """Labels on a container: enough to adopt or clean it up after a restart."""
    return {
        LABEL_SESSION: session.id,
        LABEL_KERNEL: container.kernel_id,
        LABEL_HOST: container.host,
        LABEL_ROLE: container.role,
        LABEL_MANAGER: manager_id,
        LABEL_SESSION_NAME: session.name,
        LABEL_MODE: session.spec.mode.value,
        LABEL_SIZE: str(session.spec.size),
    }


def network_labels(session: Session, manager_id: str) -> dict[str, str]:
    """Labels on a session's private network."""
    return {LABEL_SESSION: session.id, LABEL_MANAGER: manager_id}


def container_name(session: Session, host: str) -> str:
    """Docker name of a container: unique per session, readable in ``docker ps``."""
    return f"jc-{session.id[:12]}-{host}"


def network_name(session: Session) -> str:
    """Docker name of a session's private network (a warm set's, if it took one)."""
    return session.network or f"jc-{session.id[:12]}"


def files_volume_name(session: Session) -> str:
    """Docker name of the volume that carries a session's start-up files to its subs."""
    return f"jc-{session.id[:12]}-files"


def is_uuid(text: object) -> bool:
    """Whether ``text`` is a UUID in its canonical form (session and kernel ids):
    ids from labels or request bodies become paths and names only if they are."""
    return isinstance(text, str) and _CANONICAL_UUID.fullmatch(text) is not None


#: A UUID as ``str(uuid.UUID(...))`` writes it (the uuid module costs the CLI's start).
_CANONICAL_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
#: Namespace of the file names made for kernel ids that are not UUIDs.
_KERNEL_FILES = "5b0f6a3e-9c1d-4e7a-8f2b-6d4c3a1e0f97"


def kernel_file_id(kernel_id: str) -> str:
    """A name for ``kernel_id``'s files in main1 that is safe in paths and shell
    scripts: the id itself when it is a canonical UUID, else a UUID derived from it
    (jupyter_server accepts any kernel id a client chooses)."""
    import uuid

    if is_uuid(kernel_id):
        return kernel_id
    return str(uuid.uuid5(uuid.UUID(_KERNEL_FILES), kernel_id))


def kernel_socket_prefix(kernel_id: str) -> str:
    """Where in main1 a kernel reached over SSH listens: ZMQ's ``ipc`` prefix (its
    sockets are ``{prefix}-{port}``, one per port of :data:`KERNEL_PORTS`), in the
    run directory that belongs to work. Unix sockets rather than loopback ports: on
    a host-network main1 its loopback is the agent host's, open to every local user."""
    return f"{RUNTIME_DIR}/run/kernel-{kernel_file_id(kernel_id)}"


def kernel_sockets(kernel_id: str) -> list[str]:
    """The Unix sockets in main1 of :func:`kernel_socket_prefix`, in port order."""
    prefix = kernel_socket_prefix(kernel_id)
    return [f"{prefix}-{port}" for port in KERNEL_PORTS]
