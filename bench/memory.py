"""Memory and context: assembly time for a 100,000-message thread with 10,000 memories, and
recall of 100 facts planted across the thread.

One SQLite file as the sidecar has it (messages with their FTS index, LangGraph's store with the
memory index). Assembly is the context node's work for one turn, for a 128,000-token window
counted with tiktoken (gpt-4o-mini): identity files, pinned memories, memories that match the
question, the summary, recent messages until their share is full, older messages that match.
The baseline, measured in the same run, is the context the sidecar had before: the last 30
messages. Recall: each planted fact ("the codeword of vault <name> is <word>") is asked for
("What is the codeword of vault <name>?") and counts when its word is in the assembled context.
Targets: assembly p95 <= 30 ms; recall >= 95 % (printed as the share missed, <= 0.05).
"""

from __future__ import annotations

import random
import tempfile
import time
import uuid
from pathlib import Path

from bench._report import Figure, Line, Target, ms, say, show
from mcp_servers.memory import Scope
from sidecar.context.assemble import assemble
from sidecar.context.budget import budget_for
from sidecar.context.identity import read_identity
from sidecar.context.parts import build_memory_deps
from sidecar.context.tokens import load_counter
from sidecar.store import Store, open_database

NAME = "memory"
MESSAGES = 100_000
MEMORIES = 10_000
FACTS = 100
RUNS = 200
WINDOW = 128_000
P95_TARGET = 0.030
MISS_TARGET = 0.05
TOPICS = ("harbour", "lighthouse", "chapter", "river", "storm", "letter", "market", "garden")


def _names(count: int, rng: random.Random) -> list[str]:
    syllables = ("zor", "vel", "quin", "bra", "tesh", "mol", "dri", "kau", "fen", "yxa", "lum")
    names: set[str] = set()
    while len(names) < count:
        names.add("".join(rng.choice(syllables) for _ in range(3)).capitalize())
    return sorted(names)


def _seed(store: Store, thread_id: str, rng: random.Random) -> list[tuple[str, str]]:
    """100,000 messages with 100 facts among them; returns (vault, codeword) pairs."""
    names = _names(FACTS * 2, rng)
    facts = list(zip(names[:FACTS], names[FACTS:], strict=True))
    where = dict(zip(rng.sample(range(MESSAGES - 200), FACTS), facts, strict=True))
    rows: list[tuple[str, str, str, str, float]] = []
    for n in range(MESSAGES):
        role = "user" if n % 2 == 0 else "assistant"
        if n in where:
            vault, word = where[n]
            text = f"Note this: the codeword of vault {vault} is {word}."
        else:
            topic = rng.choice(TOPICS)
            text = f"Turn {n}: about the {topic}, a few more lines on the {topic} scene and tone."
        rows.append((uuid.uuid4().hex, thread_id, role, text, time.time()))
    with store.transaction():
        store.conn.executemany(
            "INSERT INTO messages(id, thread_id, role, content, created_at) VALUES (?,?,?,?,?)",
            rows,
        )
    return facts


def _memories(store: Store, thread_id: str, rng: random.Random) -> Scope:
    from langgraph.store.base import PutOp

    mem = build_memory_deps(store)
    scope = Scope(thread=thread_id, workspace="/books/river")
    tiers = ("thread", "workspace", "account")
    ops: list[PutOp] = []
    for n in range(MEMORIES):
        tier = tiers[n % 3]
        prefix = scope.prefix(tier)  # type: ignore[arg-type]
        text = f"Memory {n}: the {rng.choice(TOPICS)} matters; vault work is slow on day {n}."
        value = {
            "key": f"m_{n}",
            "tier": tier,
            "text": text,
            "by": "agent",
            "created_at": time.time(),
            "updated_at": time.time(),
            "pinned": n % 2500 == 0,
            "source_thread": thread_id,
            "source_message": None,
            "scope_label": None,
        }
        ops.append(PutOp(tuple(prefix.split(".")), f"m_{n}", value, index=False))
    for start in range(0, len(ops), 1000):
        mem.memory.store.batch(ops[start : start + 1000])
    return scope


async def run() -> list[Line]:
    say(f"{NAME}: context assembly, {MESSAGES:,} messages and {MEMORIES:,} memories")
    rng = random.Random(14)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        db = open_database(root / "atrium.db")
        store = Store(db)
        thread = store.create_thread("long").id
        seeded = time.perf_counter()
        facts = _seed(store, thread, rng)
        scope = _memories(store, thread, rng)
        say(f"  seeded in {time.perf_counter() - seeded:.1f} s")
        workspace = root / "workspace"
        (workspace / ".atrium").mkdir(parents=True)
        (workspace / ".atrium" / "AGENT.md").write_text("Call the river the Wend.\n" * 20)
        mem = build_memory_deps(store)
        counter = load_counter("openai/gpt-4o-mini")
        budget = budget_for(WINDOW)

        def once(question: str) -> tuple[float, str]:
            started = time.perf_counter()
            identity = read_identity(workspace, budget.identity_file, counter.count)
            out = assemble(
                mem.sources(store),
                thread_id=thread,
                scope=scope,
                text=question,
                identity=identity,
                budget=budget,
                counter=counter,
            )
            elapsed = time.perf_counter() - started
            return elapsed, "\n".join(t["content"] for t in out.turns)

        questions = [f"What is the codeword of vault {vault}?" for vault, _ in facts]
        once(questions[0])  # warm the token cache, as a running sidecar has it
        times: list[float] = []
        found = 0
        for i in range(RUNS):
            _vault, word = facts[i % FACTS]
            elapsed, text = once(questions[i % FACTS])
            times.append(elapsed)
            if i < FACTS and word in text:
                found += 1
        baseline: list[float] = []
        for _ in range(RUNS):
            started = time.perf_counter()
            store.recent_messages(thread, 30)
            baseline.append(time.perf_counter() - started)
        db.close()
    times.sort()
    baseline.sort()
    p95 = times[int(0.95 * len(times)) - 1]
    base95 = baseline[int(0.95 * len(baseline)) - 1]
    lines: list[Line] = [
        Target(NAME, "assembly p95 (100k messages, 10k memories)", p95, P95_TARGET, unit="s"),
        Figure(
            NAME,
            "assembly median / baseline p95",
            f"{ms(times[len(times) // 2])} / {ms(base95)} (last 30 messages, no budget), "
            f"{p95 / base95:.1f}x",
        ),
        Target(NAME, "recall: share of 100 facts missed", (FACTS - found) / FACTS, MISS_TARGET),
        Figure(NAME, "recall", f"{found}/{FACTS} planted facts in the assembled context"),
    ]
    for line in lines:
        show(line)
    return lines
