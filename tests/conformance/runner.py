"""Run the official MCP conformance suite against Atrium and hold it to its floors.

`python -m tests.conformance [--jobs N] [--only client|server]` (`make conformance`):

1. installs the pinned suites and the Node they need (`tests.setup.conformance`);
2. client suite (`tests.conformance.plan.CLIENT_RUNS`): starts one sidecar and a Unix socket,
   and runs each list of scenarios in one invocation (the suite runs them side by side). The
   client under test is `tests/conformance/relay.py`, which hands its scenario to this process;
   this drives the sidecar over its wire (`tests.conformance.client.run_scenario`: the
   scenario's server added under a fresh name, tools called with `/call`, the author's questions
   answered, the server removed) and tells the relay the exit status;
3. server suite (`SERVER_RUNS`): serves each built-in server over HTTP on 127.0.0.1
   (`--http`) and runs each suite run against it in one invocation; the fixture-free
   scenarios are scored, and every scenario's messages count for the wire schema;
4. prints the passing counts (and what fails), and exits 1 when a count is below its floor
   (`tests.conformance.floors`) or any message broke the spec's wire schema.

At most `--jobs` suite invocations run at once (default 2: the CI machine's cores). Every
result stays under `.cache/conformance/results/` for a look afterwards (the client side's
sidecar log too).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import logging
import shlex
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from tests.conformance.client import run_scenario, start_sidecar
from tests.conformance.floors import FLOORS
from tests.conformance.plan import (
    CLIENT_RUNS,
    EXCUSED,
    SERVER_RUNS,
    SERVERS,
    ClientRun,
    ServerRun,
    server_label,
)
from tests.conformance.results import (
    Tally,
    read_result,
    shortfalls,
    wire_violations,
)
from tests.e2e.harness import REPO, Sidecar
from tests.mcp_servers.builtin import http_server
from tests.setup.conformance import (
    CACHE_DIR,
    VERSIONS,
    ConformanceUnavailable,
    Suite,
    install_suite,
)

log = logging.getLogger("conformance")

RELAY = Path(__file__).with_name("relay.py")
RESULTS = CACHE_DIR / "results"
SCENARIO_TIMEOUT_MS = 30_000
"""The suite's own limit on a client under test, per scenario."""
DRIVE_LIMIT_S = 25.0
"""How long this runner drives one client scenario before it gives up on it."""
CLI_LIMIT_S = 120.0
"""How long one suite invocation may take before it is killed."""


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in ".-" else "_" for c in text)


async def run_cli(suite: Suite, args: Sequence[str], log_file: Path) -> str:
    """Run the suite with `args`, its output into `log_file`; the output."""
    with log_file.open("wb") as out:
        proc = await asyncio.create_subprocess_exec(
            *suite.command(*args),
            cwd=REPO,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=out,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            await asyncio.wait_for(proc.wait(), CLI_LIMIT_S)
        except TimeoutError:
            proc.kill()
            await proc.wait()
    return log_file.read_text(encoding="utf-8", errors="replace")


def scenario_list(output: str, role: str) -> list[str]:
    """The scenario names of the first `<role> scenarios` block of a `list` output."""
    names: list[str] = []
    inside = False
    for line in output.splitlines():
        if line.startswith(f"{role} scenarios"):
            inside = True
        elif inside and line.strip().startswith("- "):
            names.append(line.strip()[2:].split()[0])
        elif inside and names:
            break
    return names


class ClientDesk:
    """The client suite's side of the runner: one sidecar, the relay socket, the scenarios."""

    def __init__(self, sidecar: Sidecar, socket_path: Path) -> None:
        self.sidecar = sidecar
        self.socket_path = socket_path
        self._names = itertools.count(1)

    @property
    def command(self) -> str:
        parts = (sys.executable, str(RELAY), str(self.socket_path))
        return " ".join(shlex.quote(p) for p in parts)

    async def serve_relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One scenario handed over by the relay: drive it, answer its exit status."""
        code = 1
        try:
            request: dict[str, Any] = json.loads(await reader.readline())
            server = f"c{next(self._names)}"
            drive = run_scenario(self.sidecar, server, request["url"], request["context"])
            code = await asyncio.wait_for(drive, DRIVE_LIMIT_S)
        except TimeoutError:
            log.warning("a client scenario ran past %ss", DRIVE_LIMIT_S)
        except Exception:  # the relay's boundary: any failure is that scenario's exit status
            log.exception("a client scenario failed in the runner")
        writer.write(json.dumps({"exit": code}).encode() + b"\n")
        await writer.drain()
        writer.close()

    async def run(self, suite: Suite, run: ClientRun, gate: asyncio.Semaphore) -> Tally:
        """Every scenario of `run` in one invocation (the suite runs them side by side, each
        handed over by its own relay), scored from the results it leaves."""
        folder = RESULTS / "client" / _slug(run.label)
        folder.mkdir(parents=True)
        listing = ["list", "--client"]
        selection = ["--requirements", run.requirements] if run.requirements else ["--suite", "all"]
        if run.requirements:
            listing += selection
        scenarios = scenario_list(await run_cli(suite, listing, folder / "list.log"), "Client")
        args = ["client", "--command", self.command, *selection, "-o", str(folder)]
        async with gate:
            await run_cli(suite, [*args, "--timeout", str(SCENARIO_TIMEOUT_MS)], folder / "cli.log")
        results = [read_result(s, folder, pattern=f"{s}-[0-9]*/checks.json") for s in scenarios]
        return Tally(run.label, results, wire_violations(folder))


async def client_tallies(suites: dict[str, Suite], gate: asyncio.Semaphore) -> list[Tally]:
    with tempfile.TemporaryDirectory(prefix="atrium-conf-") as tmp:
        sidecar = await start_sidecar(Path(tmp) / "sidecar")
        desk = ClientDesk(sidecar, Path(tmp) / "relay.sock")
        relay = await asyncio.start_unix_server(desk.serve_relay, path=str(desk.socket_path))
        try:
            return [await desk.run(suites[run.version], run, gate) for run in CLIENT_RUNS]
        finally:
            relay.close()
            await relay.wait_closed()
            await sidecar.kill()
            (RESULTS / "client" / "sidecar.log").write_bytes(sidecar.stderr)


async def _server_run(
    suite: Suite, run: ServerRun, server: str, url: str, gate: asyncio.Semaphore
) -> Tally:
    label = server_label(server, run)
    folder = RESULTS / "server" / _slug(label)
    folder.mkdir(parents=True)
    args = ["server", "--url", url, "-o", str(folder)]
    args += ["--requirements", run.requirements] if run.requirements else ["--suite", "active"]
    async with gate:
        await run_cli(suite, args, folder / "cli.log")
    results = [
        read_result(
            s, folder, EXCUSED.get(s, frozenset()), pattern=f"server-{s}-[0-9]*/checks.json"
        )
        for s in run.scenarios
    ]
    return Tally(label, results, wire_violations(folder))


async def server_tallies(suites: dict[str, Suite], gate: asyncio.Semaphore) -> list[Tally]:
    with tempfile.TemporaryDirectory(prefix="atrium-conf-") as tmp:
        async with AsyncExitStack() as servers:
            urls: dict[str, str] = {}
            for name in SERVERS:
                (Path(tmp) / name).mkdir()
                urls[name] = await servers.enter_async_context(http_server(name, Path(tmp) / name))
            runs = [
                _server_run(suites[run.version], run, name, urls[name], gate)
                for name in SERVERS
                for run in SERVER_RUNS
            ]
            return list(await asyncio.gather(*runs))


def report(tallies: Sequence[Tally], elapsed: float) -> list[str]:
    """Print the counts and what fails; the problems that fail the run."""
    print("MCP conformance (@modelcontextprotocol/conformance), passing scenarios:")
    for tally in tallies:
        print(tally.line(FLOORS.get(tally.label)))
        failing = tally.failing()
        if failing:
            print(f"    failing: {', '.join(failing)}")
    problems = shortfalls(tallies, FLOORS)
    for problem in problems:
        print(f"BELOW FLOOR: {problem}")
    print(f"conformance: {elapsed:.0f} s; results in {RESULTS}")
    return problems


async def main_async(jobs: int, only: str | None) -> int:
    started = time.monotonic()
    try:
        suites = {v: await asyncio.to_thread(install_suite, v) for v in VERSIONS}
    except ConformanceUnavailable as exc:
        print(f"conformance suite unavailable: {exc}", file=sys.stderr)
        return 1
    shutil.rmtree(RESULTS, ignore_errors=True)
    gate = asyncio.Semaphore(jobs)
    tallies: list[Tally] = []
    if only in (None, "client"):
        tallies += await client_tallies(suites, gate)
    if only in (None, "server"):
        tallies += await server_tallies(suites, gate)
    problems = report(tallies, time.monotonic() - started)
    if only is not None:
        problems = [p for p in problems if p.startswith(only)]
    return 1 if problems else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.conformance", description=__doc__)
    parser.add_argument("--jobs", type=int, default=2, help="suite invocations at once")
    parser.add_argument("--only", choices=("client", "server"), default=None)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    return asyncio.run(main_async(max(1, args.jobs), args.only))
