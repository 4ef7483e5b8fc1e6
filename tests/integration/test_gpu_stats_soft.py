"""GPU figures fail soft on a real engine (#14 item 1): this machine has no GPU, so a
session's container is asked what a container given GPUs is asked (nvidia-smi,
through the real Docker agent): with no nvidia-smi in the image the sample has no
GPU figures and a note saying why, and reading it costs no error."""

from __future__ import annotations

import pytest

from jupyter_cluster.core.stats import Usage
from jupyter_cluster.engine.gpu_stats import read_gpus

from .support import Workspace

pytestmark = pytest.mark.docker


async def test_no_nvidia_smi_gives_a_note_not_an_error(ws: Workspace) -> None:
    manager = ws.manager()
    try:
        session = await manager.launch(manager.make_spec(cpu="0.25", mem="256m"))
        main1 = session.containers[0]
        assert main1.container_id and main1.agent
        gpus, note = await read_gpus(manager.agent(main1.agent), main1.container_id)
        assert gpus == ()
        assert note == "no GPU figures: nvidia-smi is not available in the container"
        (usage,) = (await manager.stats(session.id)).values()  # given no GPU: not asked
        assert isinstance(usage, Usage) and "gpus" not in usage.to_dict()
        await manager.terminate(session.id)
    finally:
        await manager.close()
