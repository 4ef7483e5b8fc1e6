"""The command and environment a kernel runs with in main1, as a local kernel would.

Called by :meth:`~jupyter_cluster.provisioning.process.KernelProcess.start` for every
kernel it starts in main1 (through its agent or over SSH), and by the warm pool's
prestart (:mod:`~jupyter_cluster.engine.warm_prestart`), whose interpreter becomes
a kernel. Two things a local ipykernel kernel gets from its surroundings, and ours
would otherwise lack:

- ``ipykernel install`` writes ``-Xfrozen_modules=off`` into a CPython kernelspec,
  so that the debugger sees the standard library's modules; without it debugpy
  prints a warning into main1's log at every kernel start that breakpoints may be
  missed. It costs no start-up time (0.35 s of CPU either way in the kernel image),
  and an older Python takes it too: CPython keeps ``-X`` options it does not know in
  ``sys._xoptions`` (3.6 to 3.13 tried).
- jupyter_client gives a kernel it launches ``JPY_PARENT_PID``; without one ipykernel
  prints a note for a terminal (Ctrl-C will not work; ``--existing`` and the
  connection file's path inside main1) into the log. ``1`` says "started by a
  manager" without making ipykernel watch its parent: the provisioner watches the
  kernel itself.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence

#: The interpreter option that turns CPython's frozen standard-library modules off.
FROZEN_OFF = "-Xfrozen_modules=off"
#: What a kernel command that starts ipykernel has after its interpreter's options.
IPYKERNEL_MODULE = ("-m", "ipykernel_launcher")
#: The in-container ``%cluster`` magic (runtime/incluster.py), loaded in every kernel.
MAGIC_EXTENSION = "jupyter_cluster"
#: ipykernel's variable naming the process that launched it; see the module's text.
PARENT_ENV = "JPY_PARENT_PID"
#: The first words of the one command a warm main1's waiting interpreter can become:
#: the default kernelspec's, as :func:`kernel_argv` makes it.
WARM_KERNEL_WORDS = ("python3", FROZEN_OFF, *IPYKERNEL_MODULE)


def _starts_ipykernel(cmd: Sequence[str]) -> bool:
    """Whether ``cmd`` runs ipykernel (``… -m ipykernel_launcher``, or any word naming
    ipykernel, as ``python -m ipykernel`` or a wrapper script)."""
    return any("ipykernel" in part for part in cmd)


def kernel_argv(cmd: Sequence[str]) -> list[str]:
    """The command main1 runs for the kernelspec's ``cmd``: an ipykernel kernel gets
    the ``%cluster`` extension, and, when started by a Python interpreter as ``python3
    … -m ipykernel_launcher`` with no ``frozen_modules`` option of its own,
    :data:`FROZEN_OFF` after the interpreter (a wrapper such as ``conda run`` keeps its
    command as given). Other kernels' commands are left as they are."""
    argv = list(cmd)
    if not _starts_ipykernel(argv):
        return argv
    at = _module_at(argv)
    own = at is not None and any(a.startswith("-Xfrozen_modules") for a in argv[1:at])
    if at is not None and _is_python(argv[0]) and not own:
        argv.insert(1, FROZEN_OFF)
    return [*argv, f"--ext={MAGIC_EXTENSION}"]


def kernel_env(env: Mapping[str, str], python_path: str) -> dict[str, str]:
    """The kernel's environment: ``PYTHONPATH`` (where ``%cluster`` lives) and
    :data:`PARENT_ENV`, under what the kernel manager gave (``env``), which wins."""
    return {"PYTHONPATH": python_path, PARENT_ENV: "1", **env}


def _is_python(word: str) -> bool:
    """Whether ``word`` names a Python interpreter (``python3``, ``/usr/bin/python3.11``)."""
    return re.fullmatch(r"python[0-9.]*", posixpath.basename(word)) is not None


def _module_at(argv: Sequence[str]) -> int | None:
    """Where ``-m ipykernel_launcher`` begins in ``argv`` (None if it does not)."""
    for at in range(1, len(argv) - 1):
        if tuple(argv[at : at + 2]) == IPYKERNEL_MODULE:
            return at
    return None
