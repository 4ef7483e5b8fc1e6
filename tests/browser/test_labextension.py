"""The JupyterLab extension's own checks, run by pytest so that CI runs them.

``labextension/``: the lock file matches package.json (CI installs exactly those
versions), the jest unit tests pass, and eslint, prettier and stylelint (the
extension template's settings) find nothing, prettier also in the browser tests'
own scripts (``tests/browser/*.js``), which lie outside the extension. They need
labextension/node_modules, which ``pip install -e .`` (or ``make setup``) creates:
they fail, never skip, without it.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.support.constants import BIN, REPO

LABEXT = REPO / "labextension"


def jlpm(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """``jlpm …`` in labextension/ with this venv's jlpm and jupyter-builder on PATH."""
    if not (LABEXT / "node_modules").is_dir():
        pytest.fail("labextension/node_modules is missing: run `cd labextension && jlpm install`")
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "CI": "true"}
    return subprocess.run(
        [str(BIN / "jlpm"), *args],
        cwd=LABEXT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def check(done: subprocess.CompletedProcess[str]) -> None:
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-6000:]


def test_lockfile_matches_package_json() -> None:
    check(jlpm("install", "--immutable", "--mode=skip-build"))


def test_jest_unit_tests() -> None:
    done = jlpm("test")
    check(done)
    assert "Tests:" in done.stdout + done.stderr and " failed" not in done.stderr


def test_eslint_prettier_stylelint() -> None:
    check(jlpm("lint:check"))


def test_browser_scripts_are_formatted_as_the_extension() -> None:
    scripts = sorted(str(p) for p in (REPO / "tests" / "browser").glob("*.js"))
    assert len(scripts) >= 8, scripts  # the runner, the watcher and the lab_* scripts
    check(jlpm("exec", "prettier", "--config", "package.json", "--check", *scripts))
