"""The modules that run inside the containers work with the image's Python, 3.8 on.

``runtime/incluster.py`` (the ``%cluster`` magic in main1's kernel) and
``runtime/prestart.py`` (a warm main1's interpreter) run under whatever python3 an
image has, not this package's: Ubuntu 20.04 images have 3.8, Debian 11 ones 3.9.
vermin reads each for the least Python its syntax, modules, functions and arguments
need. It caught ``zip(..., strict=True)`` (3.10), which made ``%cluster status``
fail with a TypeError on such images.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import jupyter_cluster.runtime

RUNTIME = Path(jupyter_cluster.runtime.__file__).parent
#: The modules copied into containers (files.py, beside them, runs on the host).
CONTAINER_SIDE = ("incluster.py", "prestart.py")
OLDEST = "3.8"
#: vermin's command, installed with this venv's test extras.
VERMIN = [str(Path(sys.executable).parent / "vermin"), "--no-tips", "--violations", f"-t={OLDEST}-"]


def test_the_container_side_modules_need_no_newer_python_than_3_8() -> None:
    modules = [str(RUNTIME / name) for name in CONTAINER_SIDE]
    found = subprocess.run([*VERMIN, *modules], capture_output=True, text=True, timeout=120)
    assert found.returncode == 0, found.stdout + found.stderr


def test_the_check_finds_what_a_newer_python_needs(tmp_path: Path) -> None:
    newer = tmp_path / "newer.py"
    newer.write_text("pairs = list(zip([1], [2], strict=True))\n")
    found = subprocess.run([*VERMIN, str(newer)], capture_output=True, text=True, timeout=120)
    assert found.returncode != 0 and "zip(strict)" in found.stdout, found.stdout
