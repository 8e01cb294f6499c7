"""`/skill new` and the material the Skill Composer is given: the conversation without commands
and tool traffic, or a plan's tasks and results; one task for the composer profile."""

from __future__ import annotations

from pathlib import Path

import pytest

from sidecar.graph.commands import CommandError, SkillCommand, parse_command
from sidecar.plans.dag import parse_tasks, validate_plan
from sidecar.plans.profiles import DEFAULT_PROFILES
from sidecar.plans.skill_composer import (
    KEPT_DRAFT,
    conversation_material,
    keep_draft,
    kept_draft,
    plan_material,
    skill_task,
)
from sidecar.plans.skill_draft import COMPOSER_PROFILE, MAX_MATERIAL_CHARS, Job, parse_job
from sidecar.store import MessageRecord, PlanRecord, TaskRecord
from sidecar.store.records import StoredToolCall


def test_skill_new_parses_its_name_plan_and_target() -> None:
    assert parse_command("/skill new harbour-report") == SkillCommand("harbour-report")
    assert parse_command("/skill new tides from plan plan-1 to account") == SkillCommand(
        "tides", "plan-1", "account"
    )
    assert parse_command("/skill new tides to workspace from plan p") == SkillCommand(
        "tides", "p", "workspace"
    )


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("/skill", "needs 'new' and a name"),
        ("/skill list", "needs 'new' and a name"),
        ("/skill new Harbour_Report", "not a skill name"),
        ("/skill new tides to nowhere", "cannot read 'to nowhere'"),
        ("/skill new tides from plan", "cannot read 'from plan'"),
    ],
)
def test_a_malformed_skill_command_says_how_to_write_it(text: str, why: str) -> None:
    with pytest.raises(CommandError, match=why):
        parse_command(text)


def _message(role: str, content: str, *, calls: bool = False) -> MessageRecord:
    tool_calls = (StoredToolCall("c1", "workspace", "read", {}),) if calls else ()
    return MessageRecord("m", "t", role, content, 0.0, tool_calls=tool_calls)


def test_the_conversation_material_leaves_out_commands_and_tool_traffic() -> None:
    messages = [
        _message("user", "How do I write the harbour report?"),
        _message("assistant", "", calls=True),
        _message("tool", "tide table: 06:12 high"),
        _message("assistant", "Read the tides, then write it up."),
        _message("user", "/skill new harbour-report"),
    ]
    text = conversation_material(messages)
    assert "user: How do I write the harbour report?" in text
    assert "assistant: Read the tides, then write it up." in text
    assert "06:12" not in text and "/skill" not in text
    assert "empty" in conversation_material([])


def _task(
    task_id: str,
    objective: str,
    *,
    depends_on: tuple[str, ...] = (),
    summary: str | None = None,
    error: str | None = None,
) -> TaskRecord:
    return TaskRecord(
        plan_id="p1",
        id=task_id,
        seq=0,
        title=task_id.title(),
        objective=objective,
        profile="general",
        depends_on=depends_on,
        success_criteria="",
        optional=False,
        status="succeeded" if error is None else "failed",
        attempt=1,
        version=1,
        activity=None,
        stalled=False,
        started_at=None,
        finished_at=None,
        last_event_at=None,
        tokens_in=0,
        tokens_out=0,
        cost=0.0,
        sub_thread_id=None,
        session_ref=None,
        summary=summary,
        error=error,
    )


def test_the_plan_material_holds_each_task_and_its_result() -> None:
    plan = PlanRecord("p1", "t", "Harbour report", 1, "completed", None, 0.0, 0.0)
    tasks = [
        _task("tides", "List the tides.", summary="06:12 high"),
        _task("report", "Write it.", depends_on=("tides",), error="late"),
    ]
    text = plan_material(plan, tasks)
    for part in ("Harbour report", "List the tides.", "Result: 06:12 high", "After: tides"):
        assert part in text
    assert "Error: late" in text


def test_the_skill_task_is_one_valid_task_for_the_default_composer_profile() -> None:
    job = Job("harbour-report", "account")
    arguments = skill_task(job, "Conversation:\nuser: hi")
    tasks = parse_tasks(arguments["tasks"])
    [task] = validate_plan(tasks, {p.id: p for p in DEFAULT_PROFILES})
    assert task.profile == COMPOSER_PROFILE
    assert parse_job(task.objective) == job


def test_a_very_long_conversation_is_cut_to_its_newest_part() -> None:
    messages = [_message("user", f"message number {n} " + "words " * 20) for n in range(5000)]
    text = conversation_material(messages)
    assert len(text) <= MAX_MATERIAL_CHARS + 100
    assert "message number 4999" in text and "message number 0 " not in text


def test_a_kept_draft_reads_back_as_the_composers_result(tmp_path: Path) -> None:
    path = tmp_path / "runs" / "p" / "skill" / KEPT_DRAFT
    assert kept_draft(path) is None
    keep_draft(path, "---\nname: x\n---\n")
    kept = kept_draft(path)
    assert kept is not None and (kept.status, kept.summary) == ("success", "---\nname: x\n---\n")
    path.write_bytes(b"\xff\xfe")
    assert kept_draft(path) is None  # unreadable: the composer drafts again
