"""The README's first steps in a real browser: ``make lab``, then "choose the *Cluster*
kernel in the launcher".

The Lab is ``test_lab_e2e``'s (the options ``make lab`` gives it), with the kernelspec
``make lab`` installs, installed by the Makefile's own command (into the Lab's data
directory instead of the shared virtualenv). ``lab_cluster_kernel.js`` clicks its
launcher tile: a new notebook's kernel runs in main1 of a session of the kernelspec's
shape, which the notebook's toolbar names and whose sidebar entry says its kernel runs;
a cell typed into it says where it runs, and "Shut Down Kernel" from the Kernel menu
ends the session with its containers and network. Screenshots and ``results.json`` go to
``test-artifacts/browser-cluster-kernel/``. Fails, never skips, without Docker,
chromium or node.
"""

from __future__ import annotations

import pytest

from jupyter_cluster.core.units import parse_size
from jupyter_cluster.provisioning.kernelspec import TIMES
from tests.support.lab import ARTIFACTS_ROOT, CHROMIUM, make_lab_kernelspec

from .test_lab_apps import run_lab_script
from .test_lab_e2e import Lab
from .test_lab_e2e import lab as _lab  # noqa: F401  (the server, as fixture _lab)
from .test_lab_e2e import prerequisites as _prerequisites  # noqa: F401  (autouse)

pytestmark = pytest.mark.docker

ARTIFACTS = ARTIFACTS_ROOT / "browser-cluster-kernel"


def option(words: list[str], name: str) -> str:
    """The value that ``name`` (e.g. ``--size``) has in the Makefile's command."""
    assert name in words, f"the Makefile's kernelspec command has no {name}: {words}"
    return words[words.index(name) + 1]


def test_the_readmes_cluster_kernel_runs_in_main1_and_ends_with_it(_lab: Lab) -> None:  # noqa: F811
    lab = _lab  # test_lab_e2e's server fixture
    words = make_lab_kernelspec()
    size = int(option(words, "--size"))
    env = {
        "LAB_URL": lab.url,
        "LAB_TOKEN": lab.token,
        "TILE": option(words, "--display-name"),
        "ARTIFACTS": str(ARTIFACTS),
        "CHROMIUM": CHROMIUM,
    }
    results, output = run_lab_script("lab_cluster_kernel.js", env, ARTIFACTS, lab)

    assert results["ok"], f"{results}\n{output}"
    out = results["outputs"]
    assert out["kernelName"] == words[2], out  # cluster2
    # The toolbar and the sidebar know the session by the notebook's kernel.
    cpu, mem = option(words, "--cpu"), option(words, "--mem")
    assert out["label"].endswith(f": {size} {TIMES} {cpu} CPU, {mem}"), out
    assert out["sidebarKernel"] == "kernel: running in main1", out
    assert out["notebookButton"] is True, out
    hosts = ["main1", *(f"sub{i}" for i in range(1, size))]
    assert out["where"] == f"AT main1 {','.join(hosts)}", out
    running = out["running"]
    assert running["status"] == "RUNNING", running
    assert running["id"] == out["sessionId"] and running["kernel_id"] == out["kernelId"], out
    assert running["size"] == size, running
    assert running["resources"]["cpu"] == float(cpu), running
    assert running["resources"]["mem"] == parse_size(mem, "mem"), running
    assert [c["host"] for c in running["containers"]] == hosts, running
    ended = out["ended"]
    assert ended["status"] == "TERMINATED", ended
    # run_lab_script checked that nothing of the server's sessions is left in Docker.
