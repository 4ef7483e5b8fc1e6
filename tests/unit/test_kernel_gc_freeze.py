"""The cluster kernel freezes its start-up objects (issue 27 item 2): the in-container
extension moves them into Python's permanent GC generation unless the provisioner's
``gc_freeze_startup`` is off, which it says through the kernel's environment."""

from __future__ import annotations

import gc
import os
import weakref
from collections.abc import Iterator

import pytest
from jupyter_client.kernelspec import KernelSpec

from jupyter_cluster.provisioning import process
from jupyter_cluster.provisioning.provisioner import ClusterProvisioner
from jupyter_cluster.runtime import incluster


@pytest.fixture
def unfrozen() -> Iterator[None]:
    """This test process's collector as it was (nothing frozen) before and after."""
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_the_extension_freezes_what_start_up_made(
    unfrozen: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(incluster.GC_FREEZE_ENV, raising=False)
    before = len(gc.get_objects())
    incluster.freeze_startup_objects()
    assert gc.get_freeze_count() >= before // 2

    class Node:
        """A user object in a reference cycle, made after the freeze."""

    later = Node()
    later.itself = later  # type: ignore[attr-defined]
    gone = weakref.ref(later)
    del later
    gc.collect()
    assert gone() is None  # still collected


def test_off_leaves_the_collector_as_it_is_and_the_setting_leaves_the_environment(
    unfrozen: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(incluster.GC_FREEZE_ENV, "0")
    incluster.freeze_startup_objects()
    assert gc.get_freeze_count() == 0
    assert incluster.GC_FREEZE_ENV not in os.environ


def test_the_provisioner_and_the_extension_use_one_name() -> None:
    assert process.GC_FREEZE_ENV == incluster.GC_FREEZE_ENV


@pytest.mark.parametrize(("freeze", "env"), [(True, {}), (False, {process.GC_FREEZE_ENV: "0"})])
def test_the_setting_reaches_the_kernels_environment(freeze: bool, env: dict[str, str]) -> None:
    spec = KernelSpec(argv=["python3"], display_name="c", language="python", env={"A": "1"})
    provisioner = ClusterProvisioner(
        kernel_id="k", kernel_spec=spec, parent=None, gc_freeze_startup=freeze
    )
    assert provisioner._kernel_env() == {"A": "1", **env}
