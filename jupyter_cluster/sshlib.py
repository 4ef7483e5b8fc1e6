"""asyncssh, imported without cryptography's warnings about DSA.

asyncssh names cryptography's DSA key types in annotations at import time, and
cryptography 51 warns (``CryptographyDeprecationWarning``, a ``UserWarning``) each
time one is named. Imported plainly, five such warnings reach a notebook's output the
first time ``ClusterSession`` or ``%cluster`` connects anywhere. jupyter-cluster never
makes, offers or accepts DSA keys (its keys are Ed25519), so the warnings say nothing
to its users. Every module of the package that needs asyncssh imports it from here;
the filter holds only while asyncssh is imported and leaves the process's warning
filters as they were.
"""

from __future__ import annotations

import warnings

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="DSA is deprecated")
    import asyncssh

__all__ = ["asyncssh"]
