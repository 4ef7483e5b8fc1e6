"""``jupyter cluster …``: the command line (:mod:`.main`), its text output
(:mod:`.format`) and the detached launch driver (:mod:`.driver`).

The console script ``jupyter-cluster`` and ``python -m jupyter_cluster.cli`` both
run :func:`main`.
"""

from .main import main

__all__ = ["main"]
