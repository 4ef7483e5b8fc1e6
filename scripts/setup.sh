#!/usr/bin/env bash
# Make this machine ready to develop and test jupyter-cluster. Idempotent: each
# step is skipped when already done. Used by `make setup` / `make test` and CI.
#
#   1. a Docker engine that answers (installs docker.io and starts dockerd if needed)
#   2. debootstrap, the ssh client and configurable-http-proxy (JupyterHub's proxy, npm)
#   3. the virtualenv .venv with the package installed editable, with test extras
#   4. the default kernel image jupyter-cluster/kernel:latest
#   5. chromium (browser test) and an up-to-date build of the JupyterLab extension
#
# Needs root (or sudo) for steps 1-2 when something is missing; Debian/Ubuntu.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPO=$(pwd)
VENV="$REPO/.venv"
KERNEL_IMAGE=jupyter-cluster/kernel:latest
LOG=/tmp/jupyter-cluster-setup.log
DOCKERD_LOG=/tmp/jupyter-cluster-dockerd.log
export DEBIAN_FRONTEND=noninteractive

say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"
    elif command -v sudo >/dev/null; then sudo "$@"
    else die "need root for: $* (run as root or install sudo)"
    fi
}

# Run a command with its output in $LOG; show the end of it if it fails.
quietly() {
    if ! "$@" >>"$LOG" 2>&1; then
        tail -n 30 "$LOG" >&2
        die "failed: $* (full log: $LOG)"
    fi
}

APT_UPDATED=
apt_install() {
    command -v apt-get >/dev/null || die "please install: $* (no apt-get here)"
    if [ -z "$APT_UPDATED" ]; then
        say "apt-get update"
        quietly as_root apt-get update
        APT_UPDATED=1
    fi
    say "apt-get install $*"
    quietly as_root apt-get install -y "$@"
}

: >"$LOG"

# 1. Docker engine -------------------------------------------------------------
if docker info >/dev/null 2>&1; then
    say "docker engine answers"
else
    if ! command -v dockerd >/dev/null || ! command -v docker >/dev/null; then
        apt_install docker.io
    fi
    # The package may have started it (systemd), or one may be starting already.
    if ! docker info >/dev/null 2>&1 && ! pidof dockerd >/dev/null 2>&1; then
        say "starting dockerd (log: $DOCKERD_LOG)"
        as_root sh -c "nohup setsid dockerd >'$DOCKERD_LOG' 2>&1 </dev/null &"
    fi
    for _ in $(seq 60); do
        if [ -S /var/run/docker.sock ] && docker info >/dev/null 2>&1; then
            break
        fi
        sleep 1
    done
    if ! docker info >/dev/null 2>&1; then
        tail -n 20 "$DOCKERD_LOG" >&2 || true
        die "dockerd did not answer within 60 s (log: $DOCKERD_LOG)"
    fi
    say "docker engine started"
fi

# 2. System tools ----------------------------------------------------------------
missing=()
command -v debootstrap >/dev/null || [ -x /usr/sbin/debootstrap ] || missing+=(debootstrap)
command -v ssh >/dev/null || missing+=(openssh-client)
if [ ${#missing[@]} -gt 0 ]; then
    apt_install "${missing[@]}"
fi
# JupyterHub's proxy, for tests/hub and examples/team (the jupyterhub package is a test extra).
if ! command -v configurable-http-proxy >/dev/null; then
    command -v npm >/dev/null || apt_install nodejs npm
    say "npm install -g configurable-http-proxy"
    quietly as_root npm install -g configurable-http-proxy
fi

# 3. Virtualenv ------------------------------------------------------------------
command -v python3 >/dev/null || apt_install python3 python3-venv
if [ ! -x "$VENV/bin/python" ]; then
    # Debian's python3 has no ensurepip (so no venv) without python3-venv.
    python3 -c 'import ensurepip' 2>/dev/null || apt_install python3-venv
    say "creating $VENV with $(python3 --version)"
    rm -rf "$VENV"
    quietly python3 -m venv "$VENV"
fi
# Reinstall only when pyproject.toml changed: the editable install follows the sources.
stamp="$VENV/.jupyter-cluster-installed"
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    say "pip install -e '.[test]'"
    quietly "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e '.[test]'
    echo "$want" >"$stamp"
else
    say "$VENV up to date"
fi

# 4. Kernel image ----------------------------------------------------------------
if docker image inspect "$KERNEL_IMAGE" >/dev/null 2>&1; then
    say "image $KERNEL_IMAGE present"
else
    say "building $KERNEL_IMAGE"
    if [ -x "$VENV/bin/jupyter-cluster" ] && "$VENV/bin/python" -c 'import jupyter_cluster.cli.main' 2>/dev/null; then
        "$VENV/bin/jupyter-cluster" image build
    else
        "$VENV/bin/python" -c 'import asyncio
from jupyter_cluster.images.build import build_kernel_image
asyncio.run(build_kernel_image())'
    fi
fi

# 5. Front end -------------------------------------------------------------------
# Chromium for the browser test (tests/browser). pip install built the JupyterLab
# extension (hatch-jupyter-builder) and installed a copy of it; when its sources
# changed since, rebuild it and refresh that copy.
command -v chromium >/dev/null || apt_install chromium
labext_build="$REPO/jupyter_cluster/labextension"
labext_dest="$VENV/share/jupyter/labextensions/jupyter-cluster"
if [ ! -f "$labext_build/package.json" ] || [ -n "$(cd labextension && find src style schema \
        package.json yarn.lock tsconfig.json -newer "$labext_build/package.json" | head -n 1)" ]; then
    say "building the JupyterLab extension (labextension/)"
    (cd labextension && export PATH="$VENV/bin:$PATH" &&
        quietly jlpm install --immutable && quietly jlpm build:prod)
fi
if ! diff -rq -x install.json "$labext_build" "$labext_dest" >/dev/null 2>&1; then
    say "installing the JupyterLab extension into $VENV"
    rm -rf "$labext_dest"
    mkdir -p "$labext_dest"
    cp -r "$labext_build/." "$labext_dest/"
    cp labextension/install.json "$labext_dest/"
fi
say "ready"
