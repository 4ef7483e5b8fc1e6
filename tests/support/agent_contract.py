"""The two sides of the agent contract (``tests/integration/test_agent_contract.py``).

A :class:`Side` holds one agent, the in-memory :class:`FakeAgent` or a
:class:`DockerAgent` on the local engine, both built as ``ClusterManager.agents``
would describe the local engine (id ``local``, 2 CPUs, 4 GiB). The contract makes
the same calls on both and expects the same outcomes. What only a test can do, it
does here, once per side:

- a container's main process is a :class:`Script` (print some lines, then exit with
  a code or keep running): Docker runs it with ``/bin/sh``, the fake is told what it
  did (``emit``, ``exit``) in the background, as if it ran;
- the exec commands of the contract (:data:`FAILING`, :data:`WHO_WHERE`,
  :func:`describe`, :data:`GROW`) run in the kernel image on Docker; the fake
  answers them from the call (user, directory, environment) and the files put into
  the container, as that image's shell would;
- everything a side makes carries the run's label (a fresh manager id), and
  :meth:`Side.close` removes it through the agent; on Docker the ``docker`` command
  line then checks, as an independent witness, that nothing is left.
"""

from __future__ import annotations

import asyncio
import re
import shlex
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from jupyter_cluster.core.resources import Resources
from jupyter_cluster.engine.agents.base import Agent, ContainerSpec
from jupyter_cluster.engine.agents.fake import ExecCall, ExecHandler, FakeAgent, FakeContainer
from jupyter_cluster.engine.agents.registry import agent_configs, make_agent
from jupyter_cluster.errors import AgentError

from .constants import GIB, IMAGE, LABEL_MANAGER, MIB
from .docker import assert_nothing_left, remove_leftovers

#: The agent both sides are: the local engine as configured, with a fixed capacity.
AGENT_ID = "local"
CPU, MEM = 2.0, 4 * GIB
#: What a contract container gets (small: the suite runs on 2 cores).
SMALL = Resources(cpu=0.25, mem=256 * MIB, shm=32 * MIB, gpu=0)
#: A label of the runs' objects that only the contract uses (with a value per test).
LABEL_CASE = "jupyter-cluster.contract-case"

#: Prints a line and exits with 3.
FAILING = ("/bin/sh", "-c", "echo out; exit 3")
#: Says the variable CONTRACT_WORD of its environment, who runs it and where.
WHO_WHERE = ("/bin/sh", "-c", 'echo "$CONTRACT_WORD $(id -un) $(pwd)"')
#: Outgrows a 256m memory limit: the out-of-memory killer ends it (exit code 137).
GROW = ("python3", "-c", "a = bytearray(1024 * 2**20)")
_DESCRIBE = "stat -c '%a %u %g %F' {0} && if [ -f {0} ]; then cat {0}; fi"
_DESCRIBED = re.compile(r"stat -c '%a %u %g %F' (?P<path>/\S+) && if .*")


def describe(path: str) -> tuple[str, ...]:
    """A command that prints ``MODE UID GID TYPE`` of ``path`` and, for a file, its
    content; exit code 1 (and no output) when there is nothing at ``path``."""
    return ("/bin/sh", "-c", _DESCRIBE.format(shlex.quote(path)))


@dataclass(frozen=True)
class Script:
    """What a contract container's main process does: wait ``delay`` seconds, print
    ``lines`` (on stdout), then exit with ``code``, or keep running (None)."""

    lines: tuple[str, ...] = ()
    code: int | None = None
    delay: float = 0.0

    def command(self) -> tuple[str, ...]:
        """The process as ``/bin/sh`` runs it (in Docker)."""
        steps = [f"sleep {self.delay:g}"] if self.delay else []
        if self.lines:
            steps.append("printf '%s\\n' " + " ".join(shlex.quote(x) for x in self.lines))
        steps.append("exec sleep 600" if self.code is None else f"exit {self.code}")
        return ("/bin/sh", "-c", "; ".join(steps))


@dataclass
class Side:
    """One agent of the contract and what the tests do to it (see the module docstring)."""

    kind: str  # "fake" or "docker"
    agent: Agent
    run_id: str = field(default_factory=lambda: f"contract-{uuid.uuid4().hex[:12]}")
    scripts: dict[str, Script] = field(default_factory=dict)  # by container name and id
    plays: dict[str, asyncio.Task[None]] = field(default_factory=dict)
    volumes: list[str] = field(default_factory=list)  # made by :meth:`volume`

    @property
    def labels(self) -> dict[str, str]:
        """The label of everything this side makes (a manager id of its own)."""
        return {LABEL_MANAGER: self.run_id}

    def name(self, what: str) -> str:
        """A container or network name unique to this run."""
        return f"jc-{self.run_id}-{what}"

    async def network(self, what: str = "net") -> str:
        """A fresh bridge network of this run; its name."""
        name = self.name(what)
        await self.agent.create_network(name, self.labels, overlay=False)
        return name

    async def volume(self, what: str = "files") -> str:
        """A fresh volume of this run; its name."""
        name = self.name(what)
        await self.agent.create_volume(name, self.labels)
        self.volumes.append(name)
        return name

    def spec(
        self, what: str, network: str, script: Script = Script(), **changes: object
    ) -> ContainerSpec:
        """A small container of this run running ``script``, labelled with the run and
        ``what``; ``changes`` replace fields of the spec."""
        self.scripts[self.name(what)] = script
        spec = ContainerSpec(
            name=self.name(what),
            image=IMAGE,
            hostname=what,
            network=network,
            aliases=(what,),
            env={"CONTRACT_WORD": "hello"},
            labels={**self.labels, LABEL_CASE: what},
            resources=SMALL,
            command=script.command(),
        )
        return replace(spec, **changes)  # type: ignore[arg-type]

    async def create(self, spec: ContainerSpec) -> str:
        """Create the container of ``spec`` (made by :meth:`spec`, with its script)."""
        container_id = await self.agent.create_container(spec)
        self.scripts[container_id] = self.scripts.get(spec.name, Script())
        return container_id

    async def start(self, container_id: str) -> None:
        """Start a container: its script begins (on the fake: in the background)."""
        await self.agent.start_container(container_id)
        if isinstance(self.agent, FakeAgent):
            script = self.scripts.get(container_id, Script())
            self.plays[container_id] = asyncio.create_task(self._play(container_id, script))

    async def _play(self, container_id: str, script: Script) -> None:
        fake = self.agent
        assert isinstance(fake, FakeAgent)
        await asyncio.sleep(script.delay)
        for line in script.lines:
            if container_id not in fake.containers:
                return
            fake.emit(container_id, line)
            await asyncio.sleep(0)
        if script.code is not None and container_id in fake.containers:
            fake.exit(container_id, script.code)

    async def run(
        self, what: str, network: str, script: Script = Script(), **changes: object
    ) -> str:
        """Create and start a container running ``script``; wait until it has printed
        its lines (and exited, if it exits). Its id."""
        container_id = await self.create(self.spec(what, network, script, **changes))
        await self.start(container_id)
        await self.settled(container_id)
        return container_id

    async def settled(self, container_id: str, timeout: float = 30) -> None:
        """Wait until the container's script has printed its lines, and exited if it exits."""
        script = self.scripts.get(container_id, Script())
        play = self.plays.get(container_id)
        if play is not None:
            await asyncio.wait_for(asyncio.shield(play), timeout)
            return
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while True:
            state = await self.agent.inspect_container(container_id)
            lines = [x async for x in self.agent.logs(container_id)]
            done = len(lines) >= len(script.lines)
            if script.code is not None:
                done = done and state is not None and not state.running
            if done:
                return
            assert loop.time() < end, f"the script of {container_id[:12]} did not finish: {state}"
            await asyncio.sleep(0.05)

    async def close(self) -> None:
        """Remove everything of this run through the agent, then close it; on Docker,
        remove what is still labelled with the run and fail if there was anything."""
        for play in self.plays.values():
            play.cancel()
        problem: AgentError | None = None
        try:
            for state in await self.agent.list_containers(self.labels):
                await self.agent.remove_container(state.id)
            for network in await self.agent.list_networks(self.labels):
                await self.agent.remove_network(network.id)
            for volume in self.volumes:
                await self.agent.remove_volume(volume)
        except AgentError as exc:
            problem = exc
        finally:
            await self.agent.close()
        if self.kind == "docker":
            containers, networks = remove_leftovers(self.run_id)
            assert_nothing_left(self.run_id, containers, networks)
        if problem is not None:
            raise problem


def _fake_shell(fake: FakeAgent) -> ExecHandler:
    """The fake's answers to the contract's exec commands (as the kernel image's shell)."""

    def answer(box: FakeContainer, call: ExecCall) -> tuple[int, bytes]:
        if call.cmd == FAILING:
            return 3, b"out\n"
        if call.cmd == WHO_WHERE:
            word = {**box.spec.env, **call.env}.get("CONTRACT_WORD", "")
            return 0, f"{word} {call.user} {call.workdir}\n".encode()
        if call.cmd == GROW:
            fake.oom(box.id)
            return 137, b""
        described = (
            _DESCRIBED.fullmatch(call.cmd[-1]) if call.cmd[:2] == ("/bin/sh", "-c") else None
        )
        if described is not None:
            entry = box.files.get(shlex.split(described["path"])[0])
            if entry is None:
                return 1, b""
            kind = "directory" if entry.directory else "regular file"
            if not entry.directory and not entry.content:
                kind = "regular empty file"
            head = f"{entry.mode:o} {entry.uid} {entry.gid} {kind}\n".encode()
            return 0, head + (b"" if entry.directory else entry.content)
        raise AssertionError(f"the contract ran a command the fake cannot answer: {call.cmd}")

    return answer


def fake_side() -> Side:
    """The in-memory side: a FakeAgent shaped like the local engine (not a Swarm node)."""
    fake = FakeAgent(AGENT_ID, cpu=CPU, mem=int(MEM), images=(IMAGE,))
    fake.swarm = ""
    fake.exec_handler = _fake_shell(fake)
    return Side("fake", fake)


def docker_side(data_root: Path, **entry: object) -> Side:
    """The real side: a DockerAgent on the local engine, built from configuration as
    the manager builds it (``entry`` adds keys, e.g. a ``url``)."""
    raw: Mapping[str, object] = {"id": AGENT_ID, "cpu": CPU, "mem": "4g", **entry}
    [config] = agent_configs([raw], str(data_root))
    return Side("docker", make_agent(config))
