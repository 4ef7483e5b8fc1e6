"""The package imports asyncssh without warnings, and leaves the warning filters alone.

cryptography 51 warns about DSA each time asyncssh names its key types at import;
those warnings reached notebooks through ``ClusterSession``, and every
``jupyter cluster launch`` printed ten lines of them while the session's keys were
made (the key module imported asyncssh itself). See ``jupyter_cluster/sshlib.py``.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import cryptography

import jupyter_cluster
from tests.support.sources import parse_files

PACKAGE = Path(jupyter_cluster.__file__).parent
#: Parsed at collection, before any test runs a thread (see tests.support.sources).
PACKAGE_TREES = parse_files(PACKAGE.rglob("*.py"))

IMPORT_AND_CHECK = (
    "import warnings\n"
    "before = list(warnings.filters)\n"
    "import jupyter_cluster.client.shell, jupyter_cluster.reach.apps\n"
    "from jupyter_cluster.engine.launch.keys import generate_session_keys\n"
    "assert 'host:main1' in generate_session_keys('s', ['main1'])\n"
    "assert warnings.filters == before, 'the filters changed'\n"
    "warnings.warn('DSA is deprecated, said by someone else')\n"
)


def test_asyncssh_is_imported_quietly_and_other_warnings_still_show() -> None:
    """Every warning is shown (-W default): asyncssh's DSA ones are not, a later one is."""
    done = subprocess.run(
        [sys.executable, "-W", "default", "-c", IMPORT_AND_CHECK],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    warned = [line for line in done.stderr.splitlines() if "Warning:" in line]
    assert len(warned) == 1 and "said by someone else" in warned[0], (
        f"cryptography {cryptography.__version__}:\n{done.stderr}"
    )


def test_only_sshlib_imports_asyncssh() -> None:
    """A module importing asyncssh itself brings the warnings back (as the launch's
    key making did): every other module takes it from ``jupyter_cluster.sshlib``."""
    direct = []
    for path, tree in sorted(PACKAGE_TREES.items()):
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            if any(n == "asyncssh" or n.startswith("asyncssh.") for n in names):
                direct.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert direct == ["sshlib.py:19"], direct
