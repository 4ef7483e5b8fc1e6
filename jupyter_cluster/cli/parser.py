"""The argument parser of ``jupyter cluster …``: every subcommand, its flags and help.

:func:`~jupyter_cluster.cli.main.main` parses with :func:`build_parser`; the launch
flags are :mod:`.launch_flags`'. Bad input exits with code 2 and one line on stderr.
"""

from __future__ import annotations

import argparse
from typing import Any, NoReturn

from ..core.naming import DEFAULT_IMAGE, MAIN_HOST
from .arg_types import count, image_reference, seconds
from .launch_flags import add_launch_arguments

#: The description ``jupyter cluster --help`` prints.
DESCRIPTION = "``jupyter cluster …``: the command-line front end of the engine."
#: How every command that takes a session says what it accepts.
SESSION_HELP = "its id, a unique id prefix (4+ characters) or its name"


def _one_line(text: str) -> str:
    """``text`` with what a terminal would not print as is (newlines, escape
    sequences, bidi controls) escaped: user input quoted in a message stays on one line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"jupyter cluster: error: {_one_line(message)} (see --help)\n")

    def _get_values(self, action: argparse.Action, arg_strings: list[str]) -> Any:
        # Some Pythons drop a "--" value (``--cpu=--``) and hand the option an empty
        # list without calling its type; refuse it as the value it is.
        if arg_strings == ["--"] and action.option_strings and action.nargs is None:
            self.error(f"argument {action.option_strings[0]}: '--' is not a value")
        return super()._get_values(action, arg_strings)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = _Parser(prog="jupyter cluster", description=DESCRIPTION)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    launch = sub.add_parser("launch", help="launch a cluster session")
    add_launch_arguments(launch)
    launch.add_argument(
        "--profile",
        default=None,
        metavar="NAME",
        help="start from this launch profile (see `profile ls`); the flags given override it",
    )
    launch.add_argument("--no-wait", action="store_true", help="return at once (e.g. PENDING)")
    launch.add_argument(
        "--dry-run",
        action="store_true",
        help="make nothing: say whether the launch would start now and on which agents, or "
        "why it would wait; refused as the launch would be",
    )
    launch.add_argument("--json", action="store_true")
    launch.add_argument(
        "--command",
        default=None,
        dest="job_command",
        metavar="CMD",
        help="a batch job: run this shell command in main1 as work once the session runs; "
        "the session ends when it exits (see `wait`). Closing this terminal changes nothing.",
    )
    launch.add_argument(
        "--retries", default=0, help="with --command: try a failing command again up to N times"
    )
    launch.add_argument(
        "--max-lifetime",
        default=None,
        metavar="DURATION",
        help="terminate the session after this long, e.g. 90s, 30m, 2h (from its launch)",
    )
    launch.add_argument(
        "--priority",
        type=int,
        default=None,
        metavar="N",
        help="its place in a queue ordered by priority (higher first), within your "
        "resource policy's range (see `limits`)",
    )
    wait = sub.add_parser(
        "wait",
        help="wait until a session ends; exit with its batch job's code (0 for an "
        "interactive session removed normally, 124 at its lifetime, 1 otherwise)",
    )
    wait.add_argument("session", help=SESSION_HELP)
    wait.add_argument("--json", action="store_true")

    ls = sub.add_parser("ls", help="list sessions")
    ls.add_argument("--all", action="store_true", help="include ended sessions (history)")
    ls.add_argument("--json", action="store_true")
    show = sub.add_parser("show", help="show one session")
    show.add_argument("session", help=SESSION_HELP)
    show.add_argument("--json", action="store_true")
    logs = sub.add_parser("logs", help="print one container's log")
    logs.add_argument("session", help=SESSION_HELP)
    logs.add_argument("host", nargs="?", default=MAIN_HOST, help="the container (main1 by default)")
    logs.add_argument("--tail", type=count(0, "lines"), default=None, help="only the last N lines")
    logs.add_argument("--follow", "-f", action="store_true", help="keep printing new lines")
    logs.add_argument(
        "--raw",
        action="store_true",
        help="write the lines as they are, terminal escapes included (they are taken out "
        "when the output is a terminal, so a container cannot drive yours)",
    )
    exe = sub.add_parser(
        "exec",
        help="run a command as work in one container (or in all: --all); its input is not "
        "passed on (pipe data in with ssh)",
    )
    exe.add_argument("session", help=SESSION_HELP)
    exe.add_argument(
        "--all",
        action="store_true",
        help="run it in every container at once; lines come prefixed with the host, "
        "the exit status is the worst",
    )
    exe.add_argument(
        "rest",
        nargs=argparse.REMAINDER,
        metavar="[HOST] -- COMMAND …",
        help="the container (main1 by default) and the command",
    )
    ssh = sub.add_parser(
        "ssh", help="a shell (or -- COMMAND) in a container over SSH, with the session's key"
    )
    ssh.add_argument("session", help=SESSION_HELP)
    ssh.add_argument(
        "rest",
        nargs=argparse.REMAINDER,
        metavar="[HOST] [-- COMMAND …]",
        help="the container (main1 by default; the others through it) and a command",
    )
    forward = sub.add_parser(
        "port-forward", help="reach a port of main1 at 127.0.0.1 of this machine (over SSH)"
    )
    forward.add_argument("session", help=SESSION_HELP)
    forward.add_argument("ports", metavar="PORT[:LOCAL]", help="main1's port, and the local one")
    top = sub.add_parser("top", help="each container's CPU, memory, network, disk (and GPU) use")
    top.add_argument("session", help=SESSION_HELP)
    top.add_argument("--json", action="store_true", help="one sample as JSON")
    top.add_argument("--once", action="store_true", help="one table, then exit")
    top.add_argument("--interval", type=seconds, default=2.0, help="seconds between tables")
    rm = sub.add_parser("rm", help="terminate sessions (or cancel pending ones)")
    rm.add_argument("sessions", nargs="+", metavar="session", help=SESSION_HELP)
    rm.add_argument("--json", action="store_true")
    agents = sub.add_parser("agents", help="capacity, allocated and free per agent")
    agents.add_argument("--json", action="store_true")

    use = sub.add_parser("usage", help="allocated CPU-, memory- and GPU-hours per user")
    use.add_argument("--user", help="only this user's sessions")
    use.add_argument("--since", help="from this date (2026-01-31, 2026-01-31T08:00 UTC)")
    use.add_argument("--until", help="until this date (excluded; default now)")
    use.add_argument("--sessions", action="store_true", help="one row per session")
    use_out = use.add_mutually_exclusive_group()
    use_out.add_argument("--csv", action="store_true", help="CSV instead of a table")
    use_out.add_argument("--json", action="store_true")

    aud = sub.add_parser("audit", help="the audit log: who launched, ended, reached which session")
    aud.add_argument("--since", help="from this date (2026-01-31, 2026-01-31T08:00 UTC)")
    aud.add_argument("--user", help="only this user's actions")
    aud.add_argument("--action", help="only this action (launch, terminate, terminal, ...)")
    aud.add_argument("--limit", type=count(1, "records"), default=1000, help="the newest this many")
    aud.add_argument("--json", action="store_true")

    lim = sub.add_parser("limits", help="your resource limits (admins: a user's or group's)")
    lim.add_argument("--json", action="store_true")
    lsub = lim.add_subparsers(dest="limits_command", parser_class=_Parser)
    for name, text in (
        ("show", "one user's or group's limits (admins)"),
        ("set", "change a user's or group's limits at run time (admins): KEY=VALUE …"),
        ("rm", "drop the run-time change of a user's or group's limits (admins)"),
    ):
        one = lsub.add_parser(name, help=text)
        who = one.add_mutually_exclusive_group(required=True)
        who.add_argument("--user", help="this user's entry")
        who.add_argument("--group", help="this JupyterHub group's entry")
        one.add_argument("--json", action="store_true")
        if name == "set":
            one.add_argument(
                "pairs", nargs="+", metavar="KEY=VALUE", help="e.g. max_gpu=2 mem=64g (KEY=: drop)"
            )
    lim.set_defaults(user=None, group=None)

    folder = sub.add_parser("folder", help="manage named data folders")
    fsub = folder.add_subparsers(dest="folder_command", required=True, parser_class=_Parser)
    fsub.add_parser("create", help="create a data folder").add_argument("name")
    frm = fsub.add_parser(
        "rm", help="delete a data folder and its content, or a file or directory in one"
    )
    frm.add_argument(
        "name", metavar="NAME[/PATH]", help="a folder, or (NAME/PATH) a path inside one"
    )
    frm.add_argument(
        "-r", "--recursive", action="store_true", help="a directory in a folder, and its content"
    )
    fmv = fsub.add_parser("mv", help="rename a data folder (not while a session mounts it)")
    fmv.add_argument("name", metavar="OLD")
    fmv.add_argument("new_name", metavar="NEW")
    fls = fsub.add_parser("ls", help="list data folders, or the files in one")
    fls.add_argument("ref", nargs="?", metavar="NAME[/PATH]", help="a folder or a path in one")
    fls.add_argument("--json", action="store_true")
    fcp = fsub.add_parser(
        "cp",
        help="copy a file into or out of a data folder (NAME:PATH; missing directories "
        "of PATH are made)",
    )
    fcp.add_argument("source", metavar="SRC", help="a local file, or NAME:PATH in a folder")
    fcp.add_argument("destination", metavar="DST", help="NAME:PATH (NAME: for the top), or local")

    prof = sub.add_parser("profile", help="your own launch profiles (and the site's)")
    psub = prof.add_subparsers(dest="profile_command", required=True, parser_class=_Parser)
    psub.add_parser("ls", help="list launch profiles").add_argument("--json", action="store_true")
    psave = psub.add_parser("save", help="save the launch flags given as a profile of yours")
    psave.add_argument("profile_name", metavar="NAME")
    psave.add_argument("--description", default="", help="what the profile is for")
    add_launch_arguments(psave)
    psave.add_argument("--command", dest="job_command", metavar="CMD", help="a batch job")
    psave.add_argument("--retries", help="with --command: tries again")
    psave.add_argument("--max-lifetime", metavar="DURATION", help="e.g. 90s, 30m, 2h")
    prm = psub.add_parser("rm", help="delete a launch profile of yours")
    prm.add_argument("profile_name", metavar="NAME")

    kspec = sub.add_parser("kernelspec", help="install a kernelspec that runs in main1")
    ksub = kspec.add_subparsers(dest="kernelspec_command", required=True, parser_class=_Parser)
    kinstall = ksub.add_parser("install", help="write a cluster kernelspec")
    kinstall.add_argument("kernel_name", metavar="NAME")
    kinstall.add_argument("--display-name", default=None)
    add_launch_arguments(kinstall)
    kinstall.add_argument(
        "--profile",
        default=None,
        metavar="NAME",
        help="the launch profile's fields (resolved now), the flags given on top",
    )
    kinstall.add_argument("--launch-timeout", type=seconds, default=300.0)
    where = kinstall.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="install for this user only")
    where.add_argument("--sys-prefix", action="store_true", help="install into sys.prefix")
    where.add_argument("--prefix", default=None, help="install under this prefix")

    image = sub.add_parser("image", help="build the default kernel image, get images to agents")
    isub = image.add_subparsers(dest="image_command", required=True, parser_class=_Parser)
    build = isub.add_parser("build", help=f"build {DEFAULT_IMAGE}")
    build.add_argument("--tag", type=image_reference, default=DEFAULT_IMAGE)
    build.add_argument(
        "--base", type=image_reference, default=None, help="base image (default: Debian bookworm)"
    )
    pull = isub.add_parser("pull", help="pull an image on every agent that lacks it")
    push = isub.add_parser(
        "push-to-agents",
        help="copy an image from this machine's Docker engine to every agent that lacks it",
    )
    for command in (pull, push):
        command.add_argument("image", type=image_reference, metavar="IMAGE")
        command.add_argument(
            "--agent",
            action="append",
            default=None,
            metavar="ID",
            help="only this agent (repeatable; default: every configured agent)",
        )
    serve = sub.add_parser(
        "serve",
        help="run the shared service of a team (as a JupyterHub service; see the README)",
    )
    serve.add_argument(
        "server_args",
        nargs=argparse.REMAINDER,
        help="Jupyter server options, e.g. --ClusterManager.db_path=/srv/cluster/db.sqlite",
    )
    return parser
