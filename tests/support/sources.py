"""Python source files parsed once, while a test module is being collected.

The static checks of the package's source (its import layers, who imports
asyncssh, the handlers' decorators) parse many files. CPython 3.11's AST
constructor keeps its recursion depth in state that other threads share: an
``ast.parse`` running while another thread builds an AST can fail with
``SystemError: AST constructor recursion depth mismatch`` (python/cpython#106905,
seen here once in a CI run). Collection runs before any test has started a
thread, so the test modules parse there, through :func:`parse_files`, and their
tests only walk the trees.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path


def parse_files(paths: Iterable[Path]) -> dict[Path, ast.Module]:
    """Each file's syntax tree by its path (test modules call it at import time)."""
    return {path: ast.parse(path.read_text(), str(path)) for path in paths}
