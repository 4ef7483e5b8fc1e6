"""Per-container resources and data-folder mounts: what each container of a session gets.

Pure, frozen dataclasses used by the launch spec (:mod:`.models`), the scheduler
and the agents; validation of user input names the offending field.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidRequest
from .units import format_size, parse_cpu, parse_size, whole_number

FOLDER_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
# Names that would shadow something the runtime puts into /home/work.
#: Docker refuses containers with less memory than this.
MIN_MEM = 6 * 1024**2
RESERVED_FOLDER_NAMES = frozenset({".ssh", ".jupyter-cluster"})


@dataclass(frozen=True)
class Resources:
    """What each container of a session gets (a session needs ``size`` times this)."""

    cpu: float = 1.0
    mem: int = 1024**3
    shm: int = 64 * 1024**2
    gpu: int = 0

    def times(self, n: int) -> Resources:
        """These resources for ``n`` containers (used for totals and capacity checks)."""
        return Resources(cpu=self.cpu * n, mem=self.mem * n, shm=self.shm * n, gpu=self.gpu * n)

    def to_dict(self) -> dict[str, Any]:
        return {"cpu": self.cpu, "mem": self.mem, "shm": self.shm, "gpu": self.gpu}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Resources:
        return cls(
            cpu=float(data.get("cpu", 1.0)),
            mem=int(data.get("mem", 1024**3)),
            shm=int(data.get("shm", 64 * 1024**2)),
            gpu=int(data.get("gpu", 0)),
        )

    def describe(self) -> str:
        """Human text such as ``0.5 CPU, 512m memory, 64m shm``."""
        text = f"{self.cpu:g} CPU, {format_size(self.mem)} memory, {format_size(self.shm)} shm"
        return text + (f", {self.gpu} GPU" if self.gpu else "")

    @classmethod
    def parse(
        cls,
        cpu: str | float = 1.0,
        mem: str | int = "1g",
        shm: str | int = "64m",
        gpu: str | int = 0,
    ) -> Resources:
        """Validate user input into :class:`Resources`; errors name the field."""
        mem_b = parse_size(mem, "mem")
        if mem_b < MIN_MEM:
            raise InvalidRequest(
                f"mem: Docker needs at least {format_size(MIN_MEM)} of memory per container", "mem"
            )
        shm_b = parse_size(shm, "shm")
        if shm_b <= 0:
            raise InvalidRequest("shm: shared memory must be above 0, e.g. 64m", "shm")
        if shm_b > mem_b:  # /dev/shm is charged to the container's memory
            raise InvalidRequest(
                f"shm: shared memory is part of a container's memory: {format_size(shm_b)} "
                f"is more than its {format_size(mem_b)}; ask for at most that, or more memory",
                "shm",
            )
        try:
            gpus = whole_number(gpu)
        except ValueError:
            raise InvalidRequest(f"gpu: {gpu!r} is not a whole number of GPUs", "gpu") from None
        if gpus < 0:
            raise InvalidRequest(f"gpu: {gpu!r} is not a whole number of GPUs", "gpu")
        return cls(cpu=parse_cpu(cpu, "cpu"), mem=mem_b, shm=shm_b, gpu=gpus)


@dataclass(frozen=True)
class Mount:
    """A named data folder mounted at ``/home/work/<name>`` in every container."""

    name: str
    readonly: bool = False

    @classmethod
    def parse(cls, text: str) -> Mount:
        """Read ``NAME`` or ``NAME:ro`` / ``NAME:rw``; reject anything path-like."""
        name, _, flag = str(text).partition(":")
        if flag not in ("", "ro", "rw"):
            shown = name if name.isprintable() else "NAME"  # the error stays one line
            raise InvalidRequest(
                f"mounts: {text!r}: after the colon write ro or rw, e.g. {shown}:ro", "mounts"
            )
        validate_folder_name(name, "mounts")
        return cls(name=name, readonly=flag == "ro")

    def __str__(self) -> str:
        return f"{self.name}:ro" if self.readonly else self.name


def validate_folder_name(name: str, field: str = "name") -> str:
    """Return ``name`` if it is a valid data-folder name, else raise InvalidRequest."""
    if not isinstance(name, str) or not FOLDER_NAME_RE.fullmatch(name) or ".." in name:
        raise InvalidRequest(
            f"{field}: {name!r} is not a valid folder name; use letters, digits, '.', '_' "
            "and '-' (at most 64, starting with a letter or digit), not a path",
            field,
        )
    if name in RESERVED_FOLDER_NAMES:
        raise InvalidRequest(f"{field}: {name!r} is reserved; pick another name", field)
    return name
