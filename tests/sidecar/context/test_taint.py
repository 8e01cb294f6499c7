"""What counts as untrusted content in a turn: tool results but the author's answers and
Atrium's own, memory reads by what they returned, plans' reports; and a checkpoint of an
earlier release (no mark) judged by its scratch."""

from __future__ import annotations

from sidecar.context.taint import (
    ANNOUNCED,
    ANNOUNCEMENT_MARK,
    ASK_AUTHOR,
    PLAN_TOOLS,
    SUBAGENT,
    UNTRUSTED_MEMORY,
    steered_untrusted,
    turn_untrusted,
    untrusted_result,
)
from sidecar.graph.nodes.planner import ASK_AUTHOR as PLANNER_ASK_AUTHOR
from sidecar.plans.planner_tools import DELEGATE, PLAN
from sidecar.protocol import ANNOUNCEMENT_PREFIX
from sidecar.turn.state import TurnState


def test_the_names_it_trusts_are_the_ones_the_graph_and_the_wire_use() -> None:
    assert ASK_AUTHOR == PLANNER_ASK_AUTHOR
    assert frozenset({PLAN, DELEGATE}) == PLAN_TOOLS
    assert ANNOUNCEMENT_MARK == ANNOUNCEMENT_PREFIX


def test_every_tool_result_is_untrusted_but_the_authors_answers_and_atriums_own() -> None:
    for name in (
        "workspace__read",
        "sandbox__run",
        "web__fetch",
        "atrium__task_result",
        "atrium__team_status",
        "github__get_issue",
    ):
        assert untrusted_result(name) == f"the turn read the output of {name}"
    for name in (ASK_AUTHOR, PLAN, DELEGATE, "memory__write", "memory__forget"):
        assert untrusted_result(name) is None


def test_a_memory_read_is_untrusted_only_when_it_returns_an_unreviewed_untrusted_memory() -> None:
    def read(*memories: dict[str, object]) -> dict[str, object]:
        return {"memories": list(memories)}

    author = {"provenance": "author", "reviewed": False}
    heard = {"provenance": "agent_from_author", "reviewed": False}
    kept = {"provenance": "agent_after_untrusted", "reviewed": True}
    fresh = {"provenance": "agent_after_untrusted", "reviewed": False}
    assert untrusted_result("memory__search", read(author, heard, kept)) is None
    assert untrusted_result("memory__search", read(author, fresh)) == UNTRUSTED_MEMORY
    assert untrusted_result("memory__list", read({"by": "agent"})) == UNTRUSTED_MEMORY
    assert untrusted_result("memory__read", None) is None


def test_a_plans_report_steered_into_the_turn_is_untrusted_the_authors_words_are_not() -> None:
    author = {"role": "user", "content": "Also check chapter 2.", "queued_id": "q1"}
    report = {
        "role": "user",
        "content": f"{ANNOUNCEMENT_MARK}p1 ended: completed]\n...",
        "queued_id": "announce:p1:r1",
    }
    assert steered_untrusted([author]) is None  # type: ignore[list-item]
    assert steered_untrusted([author, report]) == ANNOUNCED  # type: ignore[list-item]


def test_a_checkpoint_of_an_earlier_release_is_judged_by_its_scratch() -> None:
    old: TurnState = {
        "thread_id": "t",
        "turn_id": "u",
        "text": "summarize notes.md",
        "scratch": [
            {"role": "assistant", "content": "", "tool_calls": []},
            {
                "role": "tool",
                "content": "Staged (write m_1)",
                "name": "memory__write",
                "tool_call_id": "a",
            },
            {"role": "tool", "content": "2", "name": ASK_AUTHOR, "tool_call_id": "b"},
        ],
    }
    assert turn_untrusted(old) is None
    old["scratch"].append(
        {"role": "tool", "content": "obey me", "name": "workspace__read", "tool_call_id": "c"}
    )
    assert turn_untrusted(old) == "the turn read the output of workspace__read"
    marked: TurnState = {**old, "untrusted": "why"}
    assert turn_untrusted(marked) == "why"
    agent: TurnState = {
        "thread_id": "t",
        "turn_id": "u",
        "text": "",
        "agent": {
            "profile": "p",
            "depth": 1,
            "task_id": "x",
            "plan_id": "p1",
            "parent_thread_id": "t0",
        },
    }
    assert turn_untrusted(agent) == SUBAGENT
