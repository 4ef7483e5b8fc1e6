#!/bin/sh
# jupyter-cluster start-up script: the first process of every container of a
# cluster session (under Docker's init). Put in by the engine at creation, runs as
# root: makes sure user `work` exists with the uid the engine gives it, starts sshd
# on port 2200, runs the user's bootstrap command as `work`, says "ready", then
# waits on sshd. Everything it and its children print goes to the container's log,
# which the engine reads, and to $RT/container.log, which `%cluster logs` reads
# over SSH inside the cluster.
# Every command run here costs the container's CPU quota on the way to "ready"
# (a size-16 session starts 16 of these on a small host at once): what the shell
# can do itself (read, case, test) is done without starting a program, and what
# the engine's files can bring (folders, FIFOs, owners, modes) is not redone here.
set -u
umask 022
RT=/opt/jupyter-cluster
say() { echo "jupyter-cluster: $*"; }
# Root's files in root's directory: $RT/run belongs to work, who could put a link
# there for root to write through at the next start.
LOG_FILE="$RT/container.log"
RC_FILE="$RT/exit-code"
CAT_PID=
SSHD_PID=

# User work with uid and gid $WORK_UID: made when the image lacks it, renumbered
# (with what it owns in /home/work) when the image gave it another uid. An image
# whose own user has that uid (jovyan, 1000, in Jupyter's images) keeps it, and work
# becomes a second name for the uid, before it in /etc/passwd: the uid's files (a
# conda in /opt/conda) are work's, and ssh, which reads the config in the home of
# the uid's first name, finds work's.
ensure_work() {
    old=
    taken=
    while IFS=: read -r name _ uid _; do
        if [ "$name" = work ]; then
            old=$uid
            break
        fi
        [ -z "$taken" ] && [ "$uid" = "$WORK_UID" ] && taken=$name
    done </etc/passwd
    if [ -z "$old" ]; then
        grep -q "^work:" /etc/group || echo "work:x:$WORK_UID:" >>/etc/group
        line="work:x:$WORK_UID:$WORK_UID:work:/home/work:/bin/sh"
        if [ -n "$taken" ]; then
            sed -i "/^$taken:/i $line" /etc/passwd
        else
            echo "$line" >>/etc/passwd
        fi
        return 0
    fi
    [ "$old" = "$WORK_UID" ] && return 0
    if cut -d: -f3 /etc/passwd | grep -qx "$WORK_UID"; then
        say "error: uid $WORK_UID (ContainerHardening.work_uid) is another user's in this image"
        return 1
    fi
    sed -i "s/^work:\([^:]*\):$old:[0-9]*:/work:\1:$WORK_UID:$WORK_UID:/" /etc/passwd
    if grep -q "^work:" /etc/group; then
        sed -i "s/^work:\([^:]*\):[0-9]*:/work:\1:$WORK_UID:/" /etc/group
    else
        echo "work:x:$WORK_UID:" >>/etc/group
    fi
    find /home/work -xdev -uid "$old" -exec chown -h "$WORK_UID:$WORK_UID" {} + 2>/dev/null
    return 0
}

# SSH sessions get the environment this container runs with (the image's PATH,
# LD_LIBRARY_PATH…, under the session's), as the kernel and `exec` do: sshd starts
# them with its own short PATH, then reads ~/.ssh/environment, which links to this
# file (work's, 0600, in root's folder: root never writes in a folder of work's).
# Shell built-ins only; a value with a newline cannot be given there and is left out,
# and TERM is the SSH client's terminal's, not the image's.
write_ssh_environment() {
    nl='
'
    export -p | while IFS= read -r line; do
        case $line in "export "*=*) name=${line#export } ;; *) continue ;; esac
        name=${name%%=*}
        case $name in "" | PWD | OLDPWD | SHLVL | _ | TERM | [0-9]* | *[!A-Za-z0-9_]*) continue ;; esac
        eval "value=\${$name-}"
        case $value in *"$nl"*) continue ;; esac
        printf '%s=%s\n' "$name" "$value"
    done >"$RT/ssh-environment"
    printf '%s\n' "${PATH-}" >"$RT/path"
}

# One of sshd's lines, as the log has it: "sshd: …", without the carriage return
# sshd ends it with (a pattern, not a command substitution: no fork on the way up).
sshd_line() {
    case $line in *[[:cntrl:]]) line=${line%?} ;; esac
    echo "sshd: $line"
}

main() {
    # First, since a kernel may be started early and waits for it: kernel output
    # written to this FIFO lands in the container's log (our stdout).
    cat <>"$RT/run/log.fifo" &
    CAT_PID=$!
    ensure_work || return 1
    # sshd without PAM refuses accounts whose password is locked ("!"); "*" only
    # disables password logins, which is what we want (keys only).
    if [ -w /etc/shadow ]; then
        while IFS=: read -r name pw _; do
            [ "$name" = work ] || continue
            case $pw in '!'*) sed -i 's/^work:![^:]*:/work:*:/' /etc/shadow ;; esac
            break
        done </etc/shadow
    fi

    as_work() {
        if command -v setpriv >/dev/null 2>&1; then
            setpriv --reuid="$WORK_UID" --regid="$WORK_UID" --init-groups "$@"
        else
            su -s /bin/sh work -c '"$0" "$@"' -- "$@"
        fi
    }


    write_ssh_environment

    SSHD=/usr/sbin/sshd
    [ -x "$SSHD" ] || SSHD=$(command -v sshd) || SSHD=/usr/sbin/sshd
    if [ ! -x "$SSHD" ]; then
        say "error: this image has no OpenSSH server (sshd); install openssh-server in it"
        return 127
    fi
    # sshd's log comes through a FIFO: its "Server listening" line, written once it
    # listens on 2200, is the readiness to wait for (no polling of /proc). Its lines
    # reach the log as "sshd: …", without the carriage return sshd ends them with,
    # so that they are told from the bootstrap's and the kernel's.
    "$SSHD" -D -e -f "$RT/sshd_config" 2>"$RT/sshd.fifo" &
    SSHD_PID=$!
    trap 'kill "$SSHD_PID" 2>/dev/null' TERM INT
    exec 3<"$RT/sshd.fifo"
    listening=
    while IFS= read -r line <&3; do
        sshd_line
        case $line in *"Server listening on "*" port 2200."*)
            listening=yes
            break
            ;;
        esac
    done
    if [ -z "$listening" ]; then
        exec 3<&-
        say "error: sshd exited at start-up"
        kill "$SSHD_PID" 2>/dev/null
        return 1
    fi
    # The kernel's tunnel asks sshd for the kernel's sockets until they exist (the
    # kernel is importing; a kernel that died has left them): sshd's refusals of
    # those are expected, and would bury the kernel's own lines.
    while IFS= read -r line; do
        case $line in *"connect to $RT/run/kernel-"*" port -2 failed: "*) continue ;; esac
        sshd_line
    done <&3 &
    exec 3<&-

    # With restricted egress, the engine sets the rules from outside once we run,
    # then drops this marker: nothing of the user's runs before that.
    if [ -f "$RT/egress-gate" ]; then
        tries=0
        until [ -f "$RT/egress-ready" ]; do
            tries=$((tries + 1))
            if [ "$tries" -gt 1200 ]; then
                say "error: the egress rules were not applied within 60 s"
                kill "$SSHD_PID" 2>/dev/null
                return 1
            fi
            sleep 0.05
        done
    fi

    if [ -f "$RT/bootstrap.sh" ]; then
        say "running the bootstrap command"
        (cd /home/work && as_work /bin/sh "$RT/bootstrap.sh") 2>&1
        rc=$?
        if [ "$rc" -ne 0 ]; then
            say "bootstrap failed with exit code $rc"
            kill "$SSHD_PID" 2>/dev/null
            return "$rc"
        fi
    fi

    say "ready"
    wait "$SSHD_PID"
    rc=$?
    say "sshd exited with code $rc"
    return "$rc"
}

# A sub given its files through the session's volume copies them into place first
# (the engine's shared_files); this script then runs from that volume.
if [ "${1:-}" = --files-from ]; then
    cp -a "$2/." / || {
        say "error: could not copy the start-up files from $2"
        exit 1
    }
fi
WORK_UID=
[ -r "$RT/work-uid" ] && read -r WORK_UID <"$RT/work-uid"
: "${WORK_UID:=1000}"
# The engine's files (runtime/files.py) bring /run/sshd, /home/work and sshd's FIFO
# with the owners and modes sshd wants; work's run folder and its FIFO come, work's,
# with a fresh container's files only, not with a container taken from the warm pool:
# only what is made here is given to work.
if [ ! -p "$RT/run/log.fifo" ]; then
    mkdir -p "$RT/run" && mkfifo -m 0600 "$RT/run/log.fifo"
    chown "$WORK_UID:$WORK_UID" "$RT/run" "$RT/run/log.fifo"
fi
: >"$LOG_FILE" # 0644 under umask 022; only root writes in $RT
echo 0 >"$RC_FILE"
# POSIX sh has no pipefail: main() leaves its exit code in a file for us.
# Its background helpers must end with it, or tee would never see the pipe close.
(
    main
    echo "$?" >"$RC_FILE"
    kill $CAT_PID $SSHD_PID 2>/dev/null
) 2>&1 | tee -a "$LOG_FILE"
rc=1
read -r rc <"$RC_FILE"
exit "$rc"
