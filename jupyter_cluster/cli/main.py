"""``jupyter cluster …``: the command-line front end of the engine.

Parses arguments with argparse, reads configuration from the usual Jupyter config
files (``jupyter_cluster_config.py``) through :mod:`jupyter_cluster.config`, and calls
the engine (:func:`~jupyter_cluster.config.make_engine`). Bad input exits with code 2 and
one line on stderr; a failed launch or agent error exits with 1. This module is the
entry point; the parser is :mod:`.parser`, the commands :mod:`.commands` and
:mod:`.container_commands`.

Every command is a fresh Python, so start-up is kept small: this module and the
parser import only the pure core; what a command needs (asyncio, the engine, the
Docker client…) is imported once the command line has been parsed
(``tests/unit/test_cli_startup.py`` checks it).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from ..errors import ClusterError, Conflict, InvalidRequest, NotFound
from .parser import build_parser

#: The module ``serve`` runs (the CLI does not import the server extension itself).
SERVE_MODULE = "jupyter_cluster.server.serve"


def _unreadable(argv: Sequence[str]) -> str | None:
    """The first argument that is not text a command can use: a NUL, or bytes that
    are not UTF-8 (Python keeps those as lone surrogates)."""
    for arg in argv:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            return arg
        if "\0" in arg:
            return arg
    return None


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """Entry point of ``jupyter-cluster`` / ``jupyter cluster``."""
    parser = build_parser()
    given = list(sys.argv[1:] if argv is None else argv)
    if given[:1] == ["serve"] and given[1:2] not in (["-h"], ["--help"]):
        # everything after `serve` is the Jupyter server's (--Class.trait=value …)
        os.execv(sys.executable, [sys.executable, "-m", SERVE_MODULE, *given[1:]])
    bad = _unreadable(given)
    if bad is not None:
        parser.error(f"argument {bad!r} is not text (a NUL, or bytes that are not UTF-8)")
    args = parser.parse_args(argv)
    args.given = given  # the flags given, over a launch profile
    try:
        code = _carry_out(args)
    except (InvalidRequest, NotFound, Conflict) as exc:
        print(f"jupyter cluster: error: {exc}", file=sys.stderr)
        code = 2
    except ClusterError as exc:
        print(f"jupyter cluster: {exc}", file=sys.stderr)
        code = 1
    except BrokenPipeError:  # e.g. `jupyter cluster show X | head`
        sys.stderr.close()
        code = 0
    except OSError as exc:
        if exc.filename is None:  # not a place of this machine's: a fault of ours
            raise
        # e.g. JUPYTER_DATA_DIR names a file, or a directory this user may not write
        print(f"jupyter cluster: cannot use {exc.filename}: {exc.strerror}", file=sys.stderr)
        code = 1
    except KeyboardInterrupt:
        print(f"jupyter cluster: {interrupted(args)}", file=sys.stderr)
        code = 130
    except Exception as exc:
        if not _is_setting_error(exc):
            raise
        said = str(exc).rstrip(".")
        print(
            f"jupyter cluster: error: a setting in the configuration is wrong: {said}; fix it "
            "in jupyter_cluster_config.py (`jupyter --paths` lists where it is read from)",
            file=sys.stderr,
        )
        code = 2
    sys.exit(code)


def _is_setting_error(exc: Exception) -> bool:
    """Whether ``exc`` is traitlets' refusal of a configured value (a str where a
    number goes, say), which would otherwise end the command in a traceback.
    traitlets is looked up, not imported: until something read the configuration,
    no such error can have happened."""
    traitlets = sys.modules.get("traitlets")
    return traitlets is not None and isinstance(exc, traitlets.TraitError)


def interrupted(args: argparse.Namespace) -> str:
    """The line Ctrl-C ends a command with: what became of its session. A launch
    this process drove was cancelled (the engine removed what it made); a session
    handed to a driver (a batch job, ``--no-wait``) or waited for runs on
    (``args.goes_on``, set by the command)."""
    goes_on = getattr(args, "goes_on", None)
    if goes_on:
        return (
            f"interrupted; session {goes_on} goes on without this command (follow it with "
            f"'jupyter cluster wait {goes_on}', end it with 'jupyter cluster rm {goes_on}')"
        )
    if args.command == "launch" and not getattr(args, "dry_run", False):
        return "interrupted; the launch was cancelled and what it had made removed"
    return "interrupted"


def _carry_out(args: argparse.Namespace) -> int:
    """``ls``/``show``/``agents``/``logs`` without the engine when Docker agrees with
    the store (see :mod:`.quick`), else the engine: started, reconciled, asked."""
    if args.command in ("ls", "show", "agents", "logs"):
        from .quick import answer

        code = answer(args)
        if code is not None:
            return code
    import asyncio  # after parsing: --help and bad flags answer without it

    from .commands import run

    return asyncio.run(run(args))


if __name__ == "__main__":
    main()
