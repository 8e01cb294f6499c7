"""`stream`: the sidecar's CPU per streamed token, against the openai SDK reading the same stream.

The real sidecar subprocess (no window) with the real DSPy planner talks to a paced
OpenAI-compatible model (`bench.stream_model`, its own process) that streams `TOKENS` tokens at
2,000, 5,000 and 10,000 tokens/s, as one run and as four concurrent runs on four threads. For
each case it prints the sidecar's CPU µs per token (utime + stime from /proc/<pid>/stat over the
runs), the last-token lag (when the bench read the event carrying a run's last token, minus when
the model wrote that token) and whether every run's streamed text is exactly the answer, in
order. The anchor, in the same run: `bench.stream_sdk` (the openai SDK alone) consuming the same
stream at the same rate, CPU µs per chunk, and the ratio between the two. Last, a reader that
stops reading the sidecar's stdout for 5 s during a 10,000 tokens/s stream: the sidecar's RSS
growth (peak minus before) and whether the text still arrived whole.

`BENCH_STREAM_TOKENS` overrides the token count (default 100,000), `BENCH_STREAM_RATES` the rates
(comma-separated), `BENCH_STREAM_MODEL` the model (default `openai/gpt-4o-mini`; an `anthropic/`
model gets Anthropic's events from the same paced model, and the SDK anchor stays OpenAI's), and
`BENCH_STREAM_PROFILE=1` adds a cProfile of the sidecar's event loop over one 2,000 tokens/s
stream, printed as the top functions by own time per token.

Targets (issue 19): sidecar CPU per token at 2,000 tokens/s ≤ 150 µs and ≤ 1.2x the SDK's per
chunk; last-token lag ≤ 50 ms (2,000/s) and ≤ 100 ms (5,000/s); four concurrent streams at
2,000 tokens/s each in order with lag ≤ 100 ms; RSS growth with a paused reader ≤ 20 MB.
Profiles and figures measured on this project are in bench/NOTES-stream.md.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import pstats
import signal
import sys
import tempfile
import time
import urllib.request
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench._proc import REPO, LineClient, make_workspace, sidecar_argv, sidecar_env
from bench._report import Figure, Line, Target, say, show
from bench.stream_model import expected_answer, prompt
from sidecar.protocol import LineSplitter

NAME = "stream"
TOKENS = int(os.environ.get("BENCH_STREAM_TOKENS", "100000"))
RATES = [int(r) for r in os.environ.get("BENCH_STREAM_RATES", "2000,5000,10000").split(",")]
CONCURRENT = 4
PAUSE_S = 5.0
CPU_TARGET_US = 150.0
SDK_RATIO_TARGET = 1.2
LAG_TARGETS_S = {2000: 0.05, 5000: 0.1}
CONCURRENT_LAG_TARGET_S = 0.1
RSS_TARGET_MB = 20.0
MODEL = os.environ.get("BENCH_STREAM_MODEL", "openai/gpt-4o-mini")
TICKS = os.sysconf("SC_CLK_TCK")
_ids = itertools.count(1)


def cpu_seconds(pid: int) -> float:
    """utime + stime of every thread of `pid` (fields 14 and 15 of /proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


@dataclass
class _Run:
    text: list[str] = field(default_factory=list)
    last_token_at: float = 0.0
    events: int = 0
    token_events: int = 0
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    outcome: str = ""


class StreamClient(LineClient):
    """A JSON-RPC client that keeps only what the bench needs of each run's events (text, the
    time of its last token event) and can stop reading the sidecar's stdout for a while."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.runs: dict[str, _Run] = {}
        self.reading = asyncio.Event()
        self.reading.set()
        super().__init__(proc)

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        splitter = LineSplitter()
        while True:
            await self.reading.wait()
            chunk = await self.proc.stdout.read(1 << 16)
            lines = splitter.feed(chunk) if chunk else splitter.finish()
            now = time.monotonic()
            for line in lines:
                if isinstance(line, bytes):
                    self._on_line(json.loads(line), now)
            if not chunk:
                break
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionError("the sidecar closed its stdout"))

    def _on_line(self, message: dict[str, Any], now: float) -> None:
        request_id = message.get("id")
        if request_id in self._pending:
            self._pending.pop(request_id).set_result(message)
            return
        if message.get("method") != "run/event":
            return
        params = message["params"]
        run = self.runs.setdefault(params["run_id"], _Run())
        event = params["event"]
        run.events += 1
        if event["type"] == "token":
            run.text.append(event["text"])
            run.token_events += 1
            run.last_token_at = now
        elif event["type"] in ("run_finished", "run_failed", "run_cancelled"):
            run.outcome = event["type"] if event["type"] != "run_failed" else str(event["error"])
            run.ended.set()


async def _open(env: dict[str, str], argv: list[str] | None = None) -> StreamClient:
    proc = await asyncio.create_subprocess_exec(
        *(argv or sidecar_argv()),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        cwd=REPO,
    )
    client = StreamClient(proc)
    await client.call("initialize", {"client_name": "bench"})
    await client.call("tool/list")
    return client


def _stats(api_base: str, stream_id: str) -> dict[str, Any]:
    url = api_base.removesuffix("/v1") + f"/stats/{stream_id}"
    with urllib.request.urlopen(url, timeout=10) as reply:
        return json.loads(reply.read())


@dataclass(frozen=True)
class Outcome:
    cpu_per_token_s: float
    lag_s: float
    exact: bool
    rss_growth: int
    events_per_run: float
    problems: tuple[str, ...]
    model_late_s: float = 0.0


async def _streams(
    client: StreamClient,
    api_base: str,
    count: int,
    tokens: int,
    rate: int,
    *,
    pause_after: float = 0,
) -> Outcome:
    """Start `count` runs on their own threads at once, wait for all, measure."""
    threads = [(await client.call("thread/create", {"title": "bench"}))["id"] for _ in range(count)]
    stream_ids = [f"s{next(_ids)}" for _ in range(count)]
    pid = client.proc.pid
    rss_before = rss_bytes(pid)
    rss_peak = rss_before
    cpu_before = cpu_seconds(pid)
    run_ids = [
        (await client.call("run/start", {"thread_id": t, "text": prompt(s, tokens, rate)}))[
            "run_id"
        ]
        for t, s in zip(threads, stream_ids, strict=True)
    ]
    runs = [client.runs.setdefault(r, _Run()) for r in run_ids]
    started = time.monotonic()
    paused = False
    while not all(r.ended.is_set() for r in runs):
        await asyncio.sleep(0.05)
        rss_peak = max(rss_peak, rss_bytes(pid))
        elapsed = time.monotonic() - started
        if pause_after and not paused and elapsed >= pause_after:
            client.reading.clear()
            paused = True
        if paused and client.reading.is_set() is False and elapsed >= pause_after + PAUSE_S:
            client.reading.set()
        if elapsed > tokens / rate * 6 + 120:
            break
    cpu = cpu_seconds(pid) - cpu_before
    expected = expected_answer(tokens)
    lags: list[float] = []
    late = 0.0
    problems: list[str] = []
    for run, stream_id in zip(runs, stream_ids, strict=True):
        if run.outcome != "run_finished":
            problems.append(f"{stream_id}: {run.outcome or 'did not end'}")
        stats = await asyncio.to_thread(_stats, api_base, stream_id)
        if stats and run.last_token_at:
            # From when the model wrote its last token (on a busy machine the paced model itself
            # falls behind its schedule; that lateness is the model's, not the sidecar's).
            lags.append(run.last_token_at - stats["written_last"])
            late = max(late, stats["written_last"] - stats["due_last"])
    exact = all("".join(r.text).strip() == expected for r in runs)
    return Outcome(
        cpu_per_token_s=cpu / (tokens * count),
        lag_s=max(lags) if lags else float("nan"),
        exact=exact,
        rss_growth=rss_peak - rss_before,
        events_per_run=sum(r.token_events for r in runs) / count,
        problems=tuple(problems),
        model_late_s=late,
    )


async def _sdk(api_base: str, tokens: int, rate: int) -> dict[str, Any]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bench.stream_sdk",
        api_base,
        f"s{next(_ids)}",
        str(tokens),
        str(rate),
        stdout=asyncio.subprocess.PIPE,
        cwd=REPO,
    )
    out, _ = await proc.communicate()
    return json.loads(out)


@asynccontextmanager
async def _model() -> AsyncGenerator[str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bench.stream_model",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        cwd=REPO,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        async with asyncio.timeout(30):
            line = await proc.stdout.readline()
        yield line.decode().strip()
    finally:
        proc.stdin.close()
        async with asyncio.timeout(10):
            await proc.wait()


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.0f} µs"


def _case(label: str, outcome: Outcome) -> Figure:
    verdict = "in order, exact" if outcome.exact else "TEXT DIFFERS"
    extra = f"; {', '.join(outcome.problems)}" if outcome.problems else ""
    return Figure(
        NAME,
        label,
        f"{_us(outcome.cpu_per_token_s)}/token, lag {outcome.lag_s * 1e3:.0f} ms, {verdict}, "
        f"{outcome.events_per_run:.0f} token events/run, "
        f"model {outcome.model_late_s * 1e3:.0f} ms behind its schedule{extra}",
    )


async def _measure(api_base: str, env: dict[str, str]) -> list[Line]:
    lines: list[Line] = []
    client = await _open(env)
    try:
        await _streams(client, api_base, 1, 2000, 2000)  # warm-up: DSPy loaded, clients made
        for rate in RATES:
            shown = len(lines)
            one = await _streams(client, api_base, 1, TOKENS, rate)
            sdk = await _sdk(api_base, TOKENS, rate)
            sdk_per_chunk = sdk["cpu_s"] / max(1, sdk["chunks"])
            lines.append(_case(f"1 stream, {rate}/s x {TOKENS}", one))
            lines.append(
                Figure(NAME, f"openai SDK, {rate}/s", f"{_us(sdk_per_chunk)}/chunk, exact")
                if sdk["exact"]
                else Figure(NAME, f"openai SDK, {rate}/s", "TEXT DIFFERS")
            )
            if rate == 2000:
                lines.append(
                    Target(
                        NAME,
                        "sidecar CPU/token, 2000/s",
                        one.cpu_per_token_s,
                        CPU_TARGET_US / 1e6,
                        unit="s",
                    )
                )
                lines.append(
                    Target(
                        NAME,
                        "sidecar / SDK CPU per token, 2000/s",
                        one.cpu_per_token_s / sdk_per_chunk,
                        SDK_RATIO_TARGET,
                    )
                )
            else:
                lines.append(
                    Figure(
                        NAME,
                        f"sidecar / SDK, {rate}/s",
                        f"{one.cpu_per_token_s / sdk_per_chunk:.2f}x",
                    )
                )
            if rate in LAG_TARGETS_S:
                lines.append(
                    Target(NAME, f"last-token lag, {rate}/s", one.lag_s, LAG_TARGETS_S[rate], "s")
                )
            for line in lines[shown:]:
                show(line)
            four = await _streams(client, api_base, CONCURRENT, TOKENS, rate)
            lines.append(_case(f"{CONCURRENT} streams, {rate}/s each x {TOKENS}", four))
            show(lines[-1])
            if rate == 2000:
                lines.append(
                    Target(
                        NAME,
                        f"{CONCURRENT} streams lag, 2000/s each",
                        four.lag_s,
                        CONCURRENT_LAG_TARGET_S,
                        "s",
                    )
                )
                show(lines[-1])
        paused = await _streams(client, api_base, 1, TOKENS, 10000, pause_after=1.0)
        lines.append(_case(f"reader paused {PAUSE_S:g} s, 10000/s", paused))
        lines.append(
            Target(
                NAME,
                "RSS growth, reader paused 5 s",
                paused.rss_growth / 2**20,
                RSS_TARGET_MB,
                "MB",
            )
        )
        for line in lines[-2:]:
            show(line)
    finally:
        await client.close()
    return lines


async def _profile(api_base: str, env: dict[str, str], out: Path) -> None:
    argv = [sys.executable, "-m", "bench.profiled_sidecar", str(out)]
    client = await _open(env, argv)
    tokens = min(TOKENS, 20000)
    try:
        await _streams(client, api_base, 1, 2000, 2000)
        client.proc.send_signal(signal.SIGUSR1)
        await client.call("ping")
        await _streams(client, api_base, 1, tokens, 2000)
        client.proc.send_signal(signal.SIGUSR2)
        await client.call("ping")
    finally:
        await client.close()
    stats = pstats.Stats(str(out))
    table: dict[Any, Any] = getattr(stats, "stats")  # noqa: B009 (pstats' undocumented table)
    rows = sorted(table.items(), key=lambda kv: kv[1][2], reverse=True)[:20]
    say(f"  cProfile of the sidecar's event loop, {tokens} tokens at 2000/s: own time per token")
    for (path, line, name), (_cc, calls, tottime, cumtime, _callers) in rows:
        where = f"{Path(path).name}:{line} {name}"
        say(
            f"    {tottime / tokens * 1e6:7.1f} µs own {cumtime / tokens * 1e6:8.1f} µs cum"
            f" {calls / tokens:5.1f} calls  {where}"
        )


async def run() -> list[Line]:
    say(f"[{NAME}] {TOKENS} tokens per stream at {', '.join(map(str, RATES))} tokens/s")
    with tempfile.TemporaryDirectory(prefix="atrium-bench-") as tmp:
        root = Path(tmp)
        async with _model() as api_base:
            env = sidecar_env(
                root / "data",
                make_workspace(root / "ws"),
                ATRIUM_MODEL=MODEL,
                # LiteLLM appends /v1/messages to an Anthropic address itself.
                ATRIUM_MODEL_API_BASE=(
                    api_base.removesuffix("/v1") if MODEL.startswith("anthropic/") else api_base
                ),
                ATRIUM_MODEL_API_KEY="x",
            )
            lines = await _measure(api_base, env)
            if os.environ.get("BENCH_STREAM_PROFILE") == "1":
                await _profile(api_base, env, root / "stream.prof")
    return lines
