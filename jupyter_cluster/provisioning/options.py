"""What cluster a kernel asks for: the provisioner's launch options.

:class:`LaunchOptions` holds the traits a cluster kernelspec sets (its
``metadata.kernel_provisioner.config``, written by :mod:`.kernelspec`) or a config
file sets as ``c.ClusterProvisioner.<name>``; :class:`~.provisioner.ClusterProvisioner`
inherits them and launches a session of :meth:`LaunchOptions.launch_fields`. In team
mode it asks only for what was set (:meth:`LaunchOptions.given_fields`), so the
shared service's launch defaults, within the caller's resource policy, fill in the
rest, as the kernelspec a user's server writes says.
"""

from __future__ import annotations

from typing import Any

from traitlets import Float, HasTraits, List, Unicode
from traitlets import Int as IntTrait

from ..setting_bounds import waits


class LaunchOptions(HasTraits):
    """The session a cluster kernel launches (a base of ClusterProvisioner, whose
    configuration section these traits are in)."""

    image = Unicode("", config=True, help="Kernel image; empty uses the manager's default.")
    size = IntTrait(1, config=True, help="Cluster size: main1 plus size-1 sub containers.")
    mode = Unicode("single-node", config=True, help="single-node or multi-node.")
    cpu = Unicode("1", config=True, help="CPUs per container, e.g. 0.5.")
    mem = Unicode("1g", config=True, help="Memory per container, e.g. 512m or 2g.")
    shm = Unicode("64m", config=True, help="Shared memory per container.")
    gpu = IntTrait(0, config=True, help="GPUs per container.")
    mounts = List(Unicode(), config=True, help="Data folders to mount (NAME or NAME:ro).")
    resource_group = Unicode("default", config=True, help="Resource group to schedule in.")
    bootstrap = Unicode("", config=True, help="Shell command run in every container at start.")
    env = List(
        Unicode(),
        config=True,
        help="Environment variables of every container and the kernel, as KEY=VALUE.",
    )
    launch_timeout = Float(
        300.0,
        config=True,
        help="Seconds the kernel may take to answer, pending time included; then the "
        "start fails and the session is cancelled or removed.",
    )
    _options_waits = waits("launch_timeout")

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        sections = [self._section(cls.__name__) for cls in type(self).mro()]
        self._given = {
            name
            for name in self.trait_names(config=True)
            if name in kwargs or any(name in section for section in sections)
        }

    def _section(self, name: str) -> dict[str, Any]:
        config = getattr(self, "config", None)
        section = dict.get(config, name) if isinstance(config, dict) else None
        return section if isinstance(section, dict) else {}

    def given_fields(self) -> dict[str, Any]:
        """:meth:`launch_fields` with None for each option neither the kernelspec nor a
        config file set (the provisioner's own defaults): a client of the shared service
        sends only the others, and the service's defaults apply to the rest. Called by
        the provisioner in team mode."""
        fields = self.launch_fields()
        for name in fields:
            if name not in self._given and name != "mounts":
                fields[name] = None
        return fields

    def launch_fields(self) -> dict[str, Any]:
        """These options as ``ClusterManager.make_spec`` keywords."""
        fields: dict[str, Any] = {
            "size": self.size,
            "mode": self.mode,
            "cpu": self.cpu,
            "mem": self.mem,
            "shm": self.shm,
            "gpu": self.gpu,
            "mounts": list(self.mounts),
            "resource_group": self.resource_group,
            "bootstrap": self.bootstrap or None,
            "env": list(self.env) or None,
        }
        if self.image:
            fields["image"] = self.image
        return fields
