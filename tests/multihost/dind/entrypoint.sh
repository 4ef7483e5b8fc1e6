#!/bin/sh
# Entrypoint of the Docker-in-Docker test agent (jupyter-cluster/test-agent): starts
# dockerd in the foreground with the arguments given to the container (its listeners,
# TLS files, ...), as tests/multihost/agents.py asks. Its log is the container's log.
#
# AGENT_CGROUP_PARENT: the cgroup the agent's inner containers are made under. By
# default, on cgroup v1 (where the host's /sys/fs/cgroup is mounted in), a child of the
# agent's own cgroup, so that `docker pause` of the agent also freezes its inner
# containers and removing the agent removes their cgroups with it. Set it to "none" to
# keep dockerd's default (/docker).
set -eu

if [ -z "${AGENT_CGROUP_PARENT:-}" ] && [ ! -e /sys/fs/cgroup/cgroup.controllers ]; then
    own=$(awk -F: '$2 ~ /(^|,)cpu(,|$)/ { print $3; exit }' /proc/self/cgroup)
    if [ -n "$own" ] && [ "$own" != "/" ]; then
        AGENT_CGROUP_PARENT="$own/inner"
    fi
fi

# dockerd wants these; a container may not have them.
mkdir -p /var/run /run/docker
# A pid file here is from this container's previous run (its pid namespace is new at
# every start): dockerd killed (e.g. `docker stop` past its timeout) leaves it, and
# then refuses to start ("pid file found").
rm -f /var/run/docker.pid /var/run/docker/containerd/containerd.pid
if ! mountpoint -q /sys/kernel/security 2>/dev/null && [ -d /sys/kernel/security ]; then
    mount -t securityfs none /sys/kernel/security 2>/dev/null || true
fi

if [ -n "${AGENT_CGROUP_PARENT:-}" ] && [ "${AGENT_CGROUP_PARENT}" != "none" ]; then
    set -- --cgroup-parent "$AGENT_CGROUP_PARENT" "$@"
fi
echo "agent-entrypoint: dockerd $*" >&2
exec dockerd "$@"
