"""The package imports asyncssh without warnings, and leaves the warning filters alone.

cryptography 51 warns about DSA each time asyncssh names its key types at import;
those warnings reached notebooks through ``ClusterSession``. See ``jupyter_cluster/sshlib.py``.
"""

from __future__ import annotations

import subprocess
import sys

import cryptography

IMPORT_AND_CHECK = (
    "import warnings\n"
    "before = list(warnings.filters)\n"
    "import jupyter_cluster.client.shell, jupyter_cluster.reach.apps\n"
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
