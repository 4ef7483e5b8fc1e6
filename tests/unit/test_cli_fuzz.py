"""Hostile CLI input (issue #11, item 7): property-based fuzzing of the flags.

hypothesis generates argv for the commands that take user input (``launch``,
``kernelspec install``, ``folder create|rm``, ``show``/``rm``/``logs``/``exec`` and
unknown commands and flags): control characters, newlines, NUL, bytes that are not
UTF-8, unicode look-alikes, huge and tiny numbers, NaN, infinities, empty and very
long strings. ``main(argv)`` runs in-process (much faster than a subprocess) in a
private Jupyter data and config dir whose only agent is a unix socket that does not
exist, so no Docker is needed. The properties, for every input:

- ``main`` never raises past its exit and never prints a traceback;
- rejected input exits with 2, one line ``jupyter cluster: error: …`` on stderr
  (besides the log's lines) and nothing on stdout, and creates nothing: no session
  row, no file or folder (the workspace's files are compared before and after);
- a launch that passes validation cannot start on the unreachable agent: it waits
  PENDING until ``ClusterManager.pending_timeout`` cancels it, then exits 1 with one
  error line; its record stays in the history as CANCELLED, nothing stays active and
  no file is left (``--no-wait`` exits 0 and its detached driver ends the same way).

Each test prints how many inputs it tried and how they ended.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from jupyter_cluster.cli.main import main
from jupyter_cluster.core.models import LaunchSpec
from jupyter_cluster.core.state import ACTIVE, SessionStatus
from tests.integration.support import Workspace
from tests.support.waiting import wait_for

#: jupyter_client deprecated the ``replace`` argument that kernelspec.install passes.
pytestmark = pytest.mark.filterwarnings("ignore:replace is ignored:DeprecationWarning")
FUZZ = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
#: What the CLI's log lines start with (the unreachable agent is logged as a warning).
LOG_PREFIX = "[ClusterConfigApp] "
ERROR_PREFIX = "jupyter cluster: error: "
#: The launch flags and values they accept, so that some generated launches pass.
VALID = {
    "--image": ["jupyter-cluster/kernel:latest"],
    "--size": ["1", "2", "16"],
    "--mode": ["single-node", "multi-node"],
    "--cpu": ["0.5", "0.01", "2"],
    "--mem": ["256m", "1g"],
    "--shm": ["64m", "1m"],
    "--gpu": ["0"],
    "--mount": ["data", "data:ro"],
    "--resource-group": ["default"],
    "--name": ["fuzz-1", "a.b_c"],
    "--bootstrap": ["true", "echo hi"],
}
HOSTILE_WORDS = [
    *("", " ", "\t", "\n", "\r\n", "\x00", "\x1b[31m", "\u202e", "\ufeff", "\udcff"),
    *("0", "-0", "-1", "+1", " 1", "1\n", "1e-10", "1e308", "1e309", "2**64", "0x10"),
    *("nan", "NaN", "inf", "-inf", "Infinity", "1_000", "\u0661", "\u00bd", "\uff11"),
    *("9" * 400, "x" * 5000, "512M", "1.5g", "12xb", "-1g", "0m", "1e3m", "nanm"),
    *("data", "data:rx", "data:ro:ro", ":ro", "../etc", "/etc", "..", ".", "a/b"),
    *("main1", "sub1", "sub99", "MAIN1", "-h", "--help", "--", "-", "--x-unknown"),
    *("\u212a", "\u017f", "a:b", "a b", "ok\n"),
]
NUMBERS = st.one_of(
    st.integers(min_value=-(2**80), max_value=2**80).map(str),
    st.floats().map(str),
    st.floats().map(repr),
)
SUFFIXES = st.sampled_from(["", "m", "g", "k", "b", "M", "G", "t", "xb", "mib", " g"])
#: Lone surrogates: how Python passes argv bytes that are not UTF-8.
UNDECODABLE = st.characters(min_codepoint=0xDC80, max_codepoint=0xDCFF)
HOSTILE = st.one_of(
    st.sampled_from(HOSTILE_WORDS),
    st.text(max_size=20),
    st.text(st.one_of(st.characters(), UNDECODABLE), max_size=8),
    st.tuples(NUMBERS, SUFFIXES).map("".join),
)


# -- running the CLI --------------------------------------------------------------


@dataclass
class Outcome:
    """What one ``jupyter cluster ARGV`` did: exit code and output."""

    argv: Sequence[str]
    code: object
    stdout: str
    stderr: str

    @property
    def messages(self) -> list[str]:
        """stderr without the log's lines."""
        return [line for line in self.stderr.splitlines() if not line.startswith(LOG_PREFIX)]

    @property
    def is_help(self) -> bool:
        """A ``-h`` in the input: argparse printed usage and exited 0."""
        return self.code == 0 and self.stdout.startswith("usage: jupyter cluster")

    def __str__(self) -> str:
        return f"argv={list(self.argv)!r} code={self.code}\n{self.stdout}\n{self.stderr}"


def run_cli(argv: Sequence[str]) -> Outcome:
    """``main(argv)`` in-process; stdout strict UTF-8 and stderr with backslash escapes,
    as Python sets them up under a UTF-8 locale. Any exception but SystemExit escapes."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    err = io.TextIOWrapper(
        io.BytesIO(), encoding="utf-8", errors="backslashreplace", write_through=True
    )
    code: object = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(argv))
        except SystemExit as exc:
            code = exc.code
    outcome = Outcome(argv, code, out.buffer.getvalue().decode(), err.buffer.getvalue().decode())
    assert isinstance(code, int), f"main() ended without an exit code: {outcome}"
    assert "Traceback" not in outcome.stderr + outcome.stdout, str(outcome)
    return outcome


def files(ws: Workspace) -> set[str]:
    """Every file and folder of the workspace (the store's own files aside)."""
    return {
        str(p.relative_to(ws.root))
        for p in ws.root.rglob("*")
        if not p.name.startswith("cluster.db")
    }


def sessions(ws: Workspace) -> dict[str, SessionStatus]:
    """Every stored session, ended ones included: id -> status."""
    store = ws.store()
    try:
        return {s.id: s.status for s in store.list(include_ended=True)}
    finally:
        store.close()


@dataclass
class Before:
    """The workspace before one input: to tell what the input changed."""

    files: set[str]
    sessions: dict[str, SessionStatus]

    @classmethod
    def of(cls, ws: Workspace) -> Before:
        """Take the snapshot."""
        return cls(files(ws), sessions(ws))


def assert_rejected(out: Outcome, ws: Workspace, before: Before) -> None:
    """Exit 2, one error line, nothing on stdout, nothing created or changed."""
    assert out.code == 2, str(out)
    assert len(out.messages) == 1 and out.messages[0].startswith(ERROR_PREFIX), str(out)
    assert out.messages[0] != ERROR_PREFIX, str(out)
    assert out.stdout == "", str(out)
    assert sessions(ws) == before.sessions, str(out)
    assert files(ws) == before.files, str(out)


def assert_unchanged(out: Outcome, ws: Workspace, before: Before) -> None:
    """Exit 0 with nothing changed: help, or a command that only reads."""
    assert out.code == 0 and out.messages == [], str(out)
    assert sessions(ws) == before.sessions, str(out)
    assert files(ws) == before.files, str(out)


def driver_log(session_id: str) -> str:
    """Where a detached launch driver writes, relative to the workspace."""
    return f"data/cluster/drivers/{session_id}.log"


def wait_for_driver(ws: Workspace, session_id: str) -> None:
    """Wait until the detached driver of ``session_id`` has ended."""
    store = ws.store()
    try:
        driver = store.driver(session_id)
    finally:
        store.close()
    assert driver is not None

    def ended() -> bool:
        try:
            with open(f"/proc/{driver.pid}/stat") as f:
                return f.read().split(") ", 1)[1][0] == "Z"
        except OSError:
            return True

    wait_for(ended, 60, f"the launch driver (pid {driver.pid}) to end", interval=0.1)


# -- fixtures -----------------------------------------------------------------------


def unreachable_agent_config(ws: Workspace) -> None:
    """One agent, a unix socket that does not exist; launches give up at once."""
    config = {
        "ClusterManager": {
            "agents": [{"id": "gone", "url": f"unix://{ws.root / 'no-agent.sock'}"}],
            "docker_connect_timeout": 1,
            "docker_timeout": 2,
            "pending_timeout": 0.2,
            "pending_poll_interval": 0.05,
        }
    }
    (ws.config_dir / "jupyter_cluster_config.json").write_text(json.dumps(config))


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    """A workspace (its own store and data folders) with a data folder ``data``, its
    environment set in this process (the detached launch driver inherits it)."""
    workspace = Workspace(tmp_path)
    unreachable_agent_config(workspace)
    for key in [k for k in os.environ if k.startswith("JUPYTER")]:
        monkeypatch.delenv(key)
    for key, value in workspace.env.items():
        if key.startswith("JUPYTER"):
            monkeypatch.setenv(key, value)
    assert run_cli(["folder", "create", "data"]).code == 0
    yield workspace
    assert not [s for s, status in sessions(workspace).items() if status in ACTIVE]


@pytest.fixture
def tally(
    request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]
) -> Iterator[Counter[str]]:
    """Counts how the inputs of one property ended; printed when the test ends."""
    counts: Counter[str] = Counter()
    yield counts
    summary = ", ".join(f"{n} {what}" for what, n in sorted(counts.items()))
    with capsys.disabled():
        print(f"\n{request.node.name}: {sum(counts.values())} inputs tried ({summary})")


# -- strategies -------------------------------------------------------------------


def value_of(flag: str) -> st.SearchStrategy[str]:
    """A value for ``flag``: one it accepts, or hostile text."""
    return st.one_of(st.sampled_from(VALID[flag]), HOSTILE)


@st.composite
def flags(draw: st.DrawFn, names: Sequence[str], most: int = 4) -> list[str]:
    """Some of the launch flags ``names`` with values, as ``--f v`` or ``--f=v``,
    maybe with an unknown flag among them."""
    argv: list[str] = []
    for flag in draw(st.lists(st.sampled_from(names), max_size=most)):
        value = draw(value_of(flag))
        argv += draw(st.sampled_from([[flag, value], [f"{flag}={value}"]]))
    if draw(st.integers(0, 9)) == 0:
        argv.insert(draw(st.integers(0, len(argv))), "--x-" + draw(st.text(max_size=5)))
    return argv


@st.composite
def launch_argv(draw: st.DrawFn) -> list[str]:
    """``launch`` with hostile and valid flags, sometimes ``--json`` or ``--no-wait``."""
    argv = ["launch", *draw(flags(list(VALID)))]
    if draw(st.booleans()):
        argv.append("--json")
    if draw(st.integers(0, 24)) == 0:  # spawns a driver process: slower
        argv.append("--no-wait")
    return argv


@st.composite
def kernelspec_argv(draw: st.DrawFn) -> list[str]:
    """``kernelspec install NAME`` with launch flags, display name and timeout; the
    location (``--prefix`` or ``--user``) is added by the test, inside the workspace."""
    valid = st.sampled_from(["cluster2", "A.b-c_d", "k8", "_x"])
    name = draw(st.one_of(valid, valid, HOSTILE))
    argv = ["kernelspec", "install", name, *draw(flags(list(VALID), most=2))]
    if draw(st.booleans()):
        argv += ["--display-name", draw(HOSTILE)]
    if draw(st.booleans()):
        argv.append(f"--launch-timeout={draw(st.one_of(st.just('60'), NUMBERS, HOSTILE))}")
    return argv


FOLDER_ARGV = st.tuples(
    st.sampled_from(["create", "rm"]),
    st.one_of(st.sampled_from(["data", "fresh", "a.b_c-d", "DATA"]), HOSTILE),
).map(lambda t: ["folder", *t])
#: Placeholders replaced by the test with the history session's name and id.
REF = st.one_of(st.sampled_from(["<name>", "<id>", "<id4>", "<id8>", "<id3>"]), HOSTILE)
HOST = st.one_of(st.sampled_from(["main1", "sub1"]), HOSTILE)
REF_ARGV = st.one_of(
    st.tuples(st.sampled_from(["show", "rm"]), REF),
    st.tuples(st.just("logs"), REF, HOST, st.lists(st.sampled_from(["--follow"]) | HOSTILE)),
    st.tuples(st.just("logs"), REF, HOST, st.just("--tail"), st.one_of(NUMBERS, HOSTILE)),
    st.tuples(st.just("exec"), REF, HOST, st.sampled_from([[], ["--"]]), st.lists(HOSTILE)),
    st.tuples(st.sampled_from(["ls", "agents", "folder", "nope", ""]), st.lists(HOSTILE)),
)


def flatten(parts: Sequence[object]) -> list[str]:
    """``("logs", "x", ["--tail"])`` -> ``["logs", "x", "--tail"]``."""
    argv: list[str] = []
    for part in parts:
        argv += part if isinstance(part, list) else [str(part)]
    return argv


# -- properties ---------------------------------------------------------------------


@settings(FUZZ, max_examples=60)
@given(argv=launch_argv())
@example(argv=["launch", "--cpu", "0.5", "--mem", "256m"])  # was exit 0 when cancelled
@example(argv=["launch", "--cpu", "0.5", "--mem", "256m", "--no-wait", "--json"])
@example(argv=["launch", "--bootstrap", "\udcff"])  # was stored, then failed in Docker
@example(argv=["launch", "--bootstrap", "echo\x00hi"])
@example(argv=["launch", "--cpu", "nan", "--mem", "1e309"])
@example(argv=["launch", "--mount", "\x1e:0"])  # the hint printed the name raw: two lines
def test_launch_flags(ws: Workspace, tally: Counter[str], argv: list[str]) -> None:
    before = Before.of(ws)
    out = run_cli(argv)
    if out.code == 2:
        assert_rejected(out, ws, before)
        tally["rejected"] += 1
        return
    new = {k: v for k, v in sessions(ws).items() if k not in before.sessions}
    assert len(new) == 1, str(out)
    (session_id,) = new
    if "--no-wait" in argv:
        assert out.code == 0 and session_id in out.stdout, str(out)
        wait_for_driver(ws, session_id)
        assert files(ws) - before.files <= {"data/cluster/drivers", driver_log(session_id)}
        tally["accepted --no-wait"] += 1
    else:
        assert out.code == 1, str(out)
        assert out.stdout == "", str(out)
        last = out.messages[-1]
        assert last.startswith("jupyter cluster: session ") and "CANCELLED" in last, str(out)
        assert [m for m in out.messages if m.startswith("jupyter cluster")] == [last], str(out)
        assert files(ws) == before.files, str(out)
        tally["accepted, cancelled"] += 1
    assert sessions(ws)[session_id] is SessionStatus.CANCELLED, str(out)


@settings(FUZZ, max_examples=100)
@given(argv=kernelspec_argv(), user=st.booleans())
@example(argv=["kernelspec", "install", "a:b"], user=False)  # was a traceback
@example(argv=["kernelspec", "install", "\u212a"], user=False)  # jupyter_client took it
@example(argv=["kernelspec", "install", "9" * 400], user=True)  # was a traceback
@example(argv=["kernelspec", "install", "k", "--launch-timeout=nan"], user=True)  # was NaN
@example(argv=["kernelspec", "install", "k", "--launch-timeout=-1"], user=False)
@example(argv=["kernelspec", "install", "k", "--launch-timeout=--"], user=False)  # was []
def test_kernelspec_install_flags(
    ws: Workspace, tally: Counter[str], argv: list[str], user: bool
) -> None:
    prefix = ws.root / "prefix"
    kernels = ws.data_dir / "kernels" if user else prefix / "share" / "jupyter" / "kernels"
    before = Before.of(ws)
    out = run_cli([*argv, "--user"] if user else [*argv, "--prefix", str(prefix)])
    if refused_or_help(out, ws, before, tally):
        return
    name = argv[2]
    # written anyway, with a warning when its sessions could never run here now
    warned = [m for m in out.messages if m.startswith(f"warning: kernel {name} cannot start ")]
    assert out.code == 0 and out.messages == warned and len(warned) <= 1, str(out)
    assert re.fullmatch(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}", name), str(out)
    path = kernels / name.lower()
    assert out.stdout == f"installed kernelspec {name} in {path}\n"
    config = strict_json((path / "kernel.json").read_text())["metadata"]["kernel_provisioner"]
    relaunch(config["config"])
    tally["installed"] += 1


def refused_or_help(out: Outcome, ws: Workspace, before: Before, tally: Counter[str]) -> bool:
    """Whether ``out`` was help or a rejection (checked, and counted); False for a
    command that ran, which the caller checks."""
    if out.is_help:
        assert_unchanged(out, ws, before)
        tally["help"] += 1
        return True
    if out.code == 2:
        assert_rejected(out, ws, before)
        tally["rejected"] += 1
        return True
    return False


def strict_json(text: str) -> dict:
    """Parse JSON as other languages do: NaN and Infinity are not JSON."""

    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} in kernel.json")

    return json.loads(text, parse_constant=refuse)


def relaunch(config: dict) -> None:
    """What the kernelspec's provisioner will launch is a valid launch."""
    timeout = config.pop("launch_timeout")
    assert isinstance(timeout, float) and 0 < timeout < math.inf, timeout
    LaunchSpec.create(
        image=config.pop("image", "jupyter-cluster/kernel:latest"),
        bootstrap=config.pop("bootstrap") or None,
        **config,
    )


@settings(FUZZ, max_examples=100)
@given(argv=FOLDER_ARGV)
@example(argv=["folder", "create", "../escape"])
@example(argv=["folder", "create", "a\x00b"])
@example(argv=["folder", "rm", "/etc"])
def test_folder_names(ws: Workspace, tally: Counter[str], argv: list[str]) -> None:
    before = Before.of(ws)
    out = run_cli(argv)
    if refused_or_help(out, ws, before, tally):
        return
    assert out.code == 0 and out.messages == [], str(out)
    folder = ws.folders_root / argv[2]
    assert folder.parent == ws.folders_root, str(out)
    where = str(folder.relative_to(ws.root))
    if argv[1] == "create":
        assert out.stdout == f"created data folder {argv[2]} at {folder}\n"
        assert folder.is_dir() and files(ws) == before.files | {where}, str(out)
        tally["created"] += 1
    else:
        assert not folder.exists() and files(ws) == before.files - {where}, str(out)
        tally["removed"] += 1
    assert sessions(ws) == before.sessions


@pytest.fixture
def history(ws: Workspace) -> str:
    """The id of a session launched as ``hist`` and cancelled (no agent took it)."""
    assert run_cli(["launch", "--name", "hist", "--cpu", "0.5", "--mem", "256m"]).code == 1
    (session_id,) = sessions(ws)
    return session_id


@settings(FUZZ, max_examples=120)
@given(parts=REF_ARGV)
@example(parts=("show", "\udcff"))  # was a traceback (the store could not encode it)
@example(parts=("logs", "<name>", "main1", ["--follow"]))
@example(parts=("exec", "<id8>", "main1", []))
@example(parts=("rm", "<id>"))
def test_session_refs_and_other_commands(
    ws: Workspace, history: str, tally: Counter[str], parts: tuple
) -> None:
    known = {"<name>": "hist", "<id>": history, "<id3>": history[:3]}
    known |= {"<id4>": history[:4], "<id8>": history[:8]}
    argv = [known.get(arg, arg) for arg in flatten(parts)]
    before = Before.of(ws)
    out = run_cli(argv)
    if out.code == 2:
        assert_rejected(out, ws, before)
        tally["rejected"] += 1
        return
    assert_unchanged(out, ws, before)
    resolved = argv[0] in ("show", "rm") and argv[1] in ("hist", history, history[:4], history[:8])
    assert out.is_help or resolved or argv[0] in ("ls", "agents", "folder"), str(out)
    tally["help" if out.is_help else f"{argv[0]} answered"] += 1
