"""Samples of the memory and context wire models (merged into `samples`)."""

from __future__ import annotations

from sidecar.protocol import (
    ApprovalInterrupt,
    CompactionInfo,
    CompactionParams,
    CompactionResult,
    ContextEvent,
    ContextItemInfo,
    IdentityFileInfo,
    IdentityGetParams,
    IdentityGetResult,
    IdentitySetParams,
    MemoryChangeInfo,
    MemoryEvent,
    MemoryEventInfo,
    MemoryEventsParams,
    MemoryEventsResult,
    MemoryInfo,
    MemoryKeyParams,
    MemoryListParams,
    MemoryListResult,
    MemorySnapshot,
    MemoryUpdateParams,
    MemoryWriteParams,
    RunEventBody,
    SummaryInfo,
    ThreadExportParams,
    ThreadExportResult,
    ThreadUsageParams,
    ThreadUsageResult,
    TurnUsageEvent,
    TurnUsageInfo,
    WireModel,
)

MEMORY = MemoryInfo(
    key="m_1",
    tier="workspace",
    text="The editor is Zofia Quintanilla-Brandt.",
    by="agent",
    created_at=1.0,
    updated_at=2.0,
    pinned=True,
    source_thread="t-1",
    source_message="turn:user",
    scope_label="/books/river",
    provenance="agent_from_author",
    reviewed=True,
)
SUMMARY = SummaryInfo(
    from_seq=1,
    to_seq=40,
    messages=40,
    text="They planned.",
    created_at=3.0,
    from_id="turn-1:user",
    to_id="turn-20:answer",
    next_id="turn-21:user",
)
USAGE = TurnUsageInfo(
    turn_id="turn",
    model="openai/gpt-4o-mini",
    prompt_tokens=900,
    completion_tokens=40,
    cost=0.0002,
    created_at=4.0,
)

MEMORY_SAMPLES: dict[type[WireModel], WireModel] = {
    MemoryListParams: MemoryListParams(
        thread_id="t-1", tier="account", query='"NEAR(', limit=5, unreviewed=True
    ),
    MemoryListResult: MemoryListResult(memories=(MEMORY,)),
    MemoryWriteParams: MemoryWriteParams(thread_id="t-1", tier="account", text="I like tea"),
    MemoryInfo: MEMORY,
    MemoryUpdateParams: MemoryUpdateParams(
        thread_id="t-1", key="m_1", tier="thread", reviewed=True
    ),
    MemoryKeyParams: MemoryKeyParams(thread_id="t-1", key="m_1"),
    MemoryEventsParams: MemoryEventsParams(thread_id="t-1", limit=50),
    MemoryEventsResult: MemoryEventsResult(
        events=(
            MemoryEventInfo(
                run_id="run-1",
                seq=12,
                after_message="turn:answer",
                event=MemoryEvent(action="saved", key="m_1", memory=MEMORY),
            ),
        ),
        has_older=True,
    ),
    IdentityGetParams: IdentityGetParams(),
    IdentityGetResult: IdentityGetResult(
        workspace="/books/river",
        files=(
            IdentityFileInfo(path=".atrium/AGENT.md", exists=True, text="Be brief."),
            IdentityFileInfo(path=".atrium/SOUL.md", exists=True, error="not UTF-8 text"),
        ),
    ),
    IdentitySetParams: IdentitySetParams(path=".atrium/USER.md", text="I write novels."),
    IdentityFileInfo: IdentityFileInfo(path="AGENTS.md", exists=False),
    CompactionParams: CompactionParams(thread_id="t-1", mode="off", compact_now=True),
    CompactionResult: CompactionResult(mode="off", compact_next=True, summaries=(SUMMARY,)),
    ThreadUsageParams: ThreadUsageParams(thread_id="t-1"),
    ThreadUsageResult: ThreadUsageResult(
        turns=(USAGE,), prompt_tokens=900, completion_tokens=40, cost=0.0002
    ),
    ThreadExportParams: ThreadExportParams(thread_id="t-1", format="json"),
    ThreadExportResult: ThreadExportResult(format="markdown", content="# Thread\n"),
}

MEMORY_EVENT_SAMPLES: list[RunEventBody] = [
    ContextEvent(
        model="openai/gpt-4o-mini",
        window=128_000,
        budget=111_616,
        used=2_345,
        tokenizer="tiktoken:o200k_base",
        items=(
            ContextItemInfo(
                kind="identity",
                label=".atrium/AGENT.md",
                tokens=120,
                included=True,
                reason="pinned",
            ),
            ContextItemInfo(
                kind="left_out",
                label="300 messages #1-#300",
                tokens=0,
                included=False,
                reason="in the summary",
            ),
        ),
        left_out_messages=300,
        warnings=("AGENTS.md is skipped: it is not UTF-8 text.",),
        compaction=CompactionInfo(
            performed=True,
            reason="outgrew",
            from_seq=1,
            to_seq=300,
            messages=300,
            memories_saved=2,
        ),
    ),
    MemoryEvent(action="saved", key="m_1", memory=MEMORY),
    TurnUsageEvent(
        model="openai/gpt-4o-mini",
        prompt_tokens=900,
        completion_tokens=40,
        cost=0.0002,
        thread_prompt_tokens=5_000,
        thread_completion_tokens=300,
        thread_cost=0.001,
    ),
]

RULE = MemorySnapshot(
    tier="workspace", text="Always ask before deleting.", pinned=True, provenance="author"
)
CHANGE = MemoryChangeInfo(
    key="m_rule",
    op="update",
    before=RULE,
    after=RULE.model_copy(update={"text": "Never ask.", "provenance": "agent_after_untrusted"}),
    untrusted="the turn read the output of workspace__read",
)
MEMORY_OTHER_SAMPLES: list[WireModel] = [
    RULE,
    CHANGE,
    ApprovalInterrupt(
        id="i-9",
        title="Change a memory?",
        body="The agent wants to change your pinned workspace memory.",
        run_id="r-1",
        server="memory",
        tool="update",
        arguments={"key": "m_rule", "text": "Never ask."},
        call_id="call-9",
        diff="--- memory m_rule (now)\n+++ memory m_rule (after)\n",
        memory=CHANGE,
    ),
]
