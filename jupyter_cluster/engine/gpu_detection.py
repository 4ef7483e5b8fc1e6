"""The settings of GPU detection: ``c.GpuDetection.*``.

:class:`~jupyter_cluster.engine.manager.ClusterManager` makes one (its child, so
it reads the same config files) and gives every agent's configuration the
:class:`~jupyter_cluster.core.gpus.GpuProbe` it describes; an agent's own
``detect_gpus`` key (``ClusterManager.agents``) overrides ``detect``, and its
``gpus`` list, when given, wins over detection altogether. The probe itself is
:mod:`jupyter_cluster.engine.agents.docker.gpus`.
"""

from __future__ import annotations

from traitlets import Enum, Float, Unicode
from traitlets.config import LoggingConfigurable

from ..core.gpus import DETECT_MODES, NVIDIA_RUNTIME, GpuProbe
from ..setting_bounds import waits
from ..setting_images import image_names


class GpuDetection(LoggingConfigurable):
    """How agents' GPUs are found (see the module docstring)."""

    detect = Enum(
        list(DETECT_MODES),
        "auto",
        config=True,
        help="""When to detect an agent's GPUs (by running nvidia-smi in a short-lived
        container on it, once per connection): 'auto' when its Docker engine lists an
        'nvidia' runtime (docker info), so machines without NVIDIA pay nothing;
        'always'; 'never' (no GPUs unless listed). An agent's 'detect_gpus' key
        overrides this, and its 'gpus' list, when given, is used instead of detection.""",
    )
    image = Unicode(
        "",
        config=True,
        help="""Image the detection container runs (it must be on the agent; nothing is
        pulled). The NVIDIA runtime mounts nvidia-smi into any image. Default: the
        manager's default_image.""",
    )
    runtime = Unicode(
        NVIDIA_RUNTIME,
        config=True,
        help="""Docker runtime the detection container runs with ('nvidia': the NVIDIA
        container runtime, which makes every GPU and nvidia-smi visible in it). Tests
        set 'runc' with an image holding a stand-in nvidia-smi.""",
    )
    timeout = Float(
        20.0,
        config=True,
        help="Seconds detection may take on an agent; after that the agent offers 0 GPUs "
        "(with a note in `jupyter cluster agents`) and stays available.",
    )
    retry_interval = Float(
        300.0,
        config=True,
        help="Seconds before a failed detection is tried again (a detection that "
        "succeeded is kept until the agent is unreachable or its engine changes).",
    )

    _detection_waits = waits("timeout", "retry_interval")
    _detection_image = image_names("image", empty_means_default=True)

    def probe(self, agent_mode: str, default_image: str) -> GpuProbe:
        """The probe of one agent: its own ``detect_gpus`` mode ("" for this
        section's ``detect``) with these settings."""
        return GpuProbe(
            mode=agent_mode or self.detect,
            image=self.image or default_image,
            runtime=self.runtime,
            timeout=self.timeout,
            retry=self.retry_interval,
        )
