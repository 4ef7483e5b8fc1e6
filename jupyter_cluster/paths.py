"""Default locations of the store and the data folders, in the Jupyter data dir.

Resolved when a manager is configured (never at import), so ``JUPYTER_DATA_DIR``
set by a user or a test is respected.
"""

from __future__ import annotations

import os

from jupyter_core.paths import jupyter_data_dir


def cluster_dir() -> str:
    """``<jupyter data dir>/cluster``: where jupyter-cluster keeps its state."""
    return os.path.join(jupyter_data_dir(), "cluster")


def default_db_path() -> str:
    """The SQLite store's default path."""
    return os.path.join(cluster_dir(), "cluster.db")


def default_data_root() -> str:
    """The default root of the named data folders."""
    return os.path.join(cluster_dir(), "folders")
