"""A kernel's last activity as the idle watcher reads it, without a server running.

jupyter_server puts a kernel being started into its kernel manager before it sets
the kernel's ``last_activity``, and reading that unset trait raises. The session
model of a REST launch, asked for meanwhile, answered 500 then (seen in CI).
"""

from __future__ import annotations

import datetime

from jupyter_server.services.kernels.kernelmanager import ServerKernelManager

from jupyter_cluster.server.idle import last_activity


def test_a_kernel_being_started_has_no_last_activity_yet() -> None:
    starting = ServerKernelManager()
    assert last_activity(starting, 123.0) == 123.0


def test_a_started_kernels_last_activity_is_its_time() -> None:
    kernel = ServerKernelManager()
    when = datetime.datetime(2026, 12, 7, 12, 0, tzinfo=datetime.timezone.utc)
    kernel.last_activity = when
    assert last_activity(kernel, 0.0) == when.timestamp()


def test_a_kernel_without_the_attribute_gives_the_default() -> None:
    assert last_activity(object(), 7.0) == 7.0
