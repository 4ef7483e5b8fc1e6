"""The Hub users' JupyterLab as the Lab e2e needs it (``tests/hub/test_lab_as_hub_user.py``).

The wrapper config of :mod:`.launch` calls :func:`configure` in the Hub's process. It
gives every user's server what the single-user e2e gives its ``jupyter lab``
(:mod:`tests.support.lab`): the same options, and JupyterLab settings, workspaces
and a root directory of its own under the test session's directory, so that nothing
lands in the users' homes. Those directories are made (owned by the user) just
before each spawn, by a ``pre_spawn_hook``: the Unix users exist only once the
example's config has run.
"""

from __future__ import annotations

import os
import pwd
from functools import partial
from pathlib import Path
from typing import Any

from tests.support.lab import LAB_ARGS, write_lab_settings

#: The directories of a user's server (under ``<base>/<user>/``) and where they go.
DIRS = {
    "settings": "JUPYTERLAB_SETTINGS_DIR",
    "workspaces": "JUPYTERLAB_WORKSPACES_DIR",
    "root": None,  # the server's root directory (Spawner.notebook_dir)
}

#: A named server whose idle clean-up is on (``tests/hub/test_team_idle.py``); the
#: other servers keep the default (off), so no other test's session times out.
IDLE_SERVER = "idle"
IDLE_TIMEOUT = 15.0
IDLE_ARGS = (f"--ClusterApp.idle_timeout={IDLE_TIMEOUT:g}", "--ClusterApp.idle_check_interval=0.5")


def user_dir(base: Path, user: str, name: str = "") -> Path:
    """``base/<user>/<name>``: where the Lab directory ``name`` of ``user`` is."""
    return base / user / name if name else base / user


def _env_value(base: Path, name: str, spawner: Any) -> str:
    return str(user_dir(base, spawner.user.name, name))


def prepare(base: Path, spawner: Any) -> None:
    """The ``pre_spawn_hook``: make the user's directories (the settings of
    :data:`tests.support.lab.LAB_SETTINGS` written once), owned by the user."""
    entry = pwd.getpwnam(spawner.user.name)
    base.mkdir(mode=0o711, exist_ok=True)
    home = user_dir(base, spawner.user.name)
    fresh = not home.exists()
    for name in DIRS:
        user_dir(base, spawner.user.name, name).mkdir(parents=True, exist_ok=True)
    if fresh:
        write_lab_settings(user_dir(base, spawner.user.name, "settings"))
    for path in (home, *home.rglob("*")):
        os.lchown(path, entry.pw_uid, entry.pw_gid)
    home.chmod(0o700)
    if spawner.name == IDLE_SERVER:  # a new list: the configured one is shared
        spawner.args = [*spawner.args, *IDLE_ARGS]


def configure(c: Any, base: str) -> None:
    """Change the Hub's config ``c``: users' servers get :data:`LAB_ARGS`, their
    directories under ``base`` (see the module docstring)."""
    where = Path(base)
    c.Spawner.args.extend(LAB_ARGS)
    c.Spawner.notebook_dir = str(user_dir(where, "{username}", "root"))
    for name, variable in DIRS.items():
        if variable:
            c.Spawner.environment[variable] = partial(_env_value, where, name)
    c.Spawner.pre_spawn_hook = partial(prepare, where)
