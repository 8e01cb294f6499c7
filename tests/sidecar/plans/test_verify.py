"""A verifier's answer becomes a verdict: PASS or FAIL on its first line (markdown and case
forgiven), reasons after it; anything else is a failed check that says what it got."""

from __future__ import annotations

from dataclasses import replace

import pytest

from sidecar.plans.attempt import AttemptResult
from sidecar.plans.verify import CHECK_FAILED, Verdict, parse_verdict, verifier_prompt
from sidecar.store import TaskRecord

_TASK = TaskRecord(
    plan_id="p",
    id="a",
    seq=0,
    title="Tides",
    objective="Read the tide table.",
    profile="general",
    depends_on=(),
    success_criteria="Names high water.",
    optional=False,
    status="running",
    attempt=1,
    version=0,
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
    summary=None,
    error=None,
)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("PASS", Verdict(True, "the result meets the criteria", "model")),
        ("pass: all good", Verdict(True, "all good", "model")),
        (
            "**FAIL**\n- no high water\n- wrong port",
            Verdict(False, "- no high water\n- wrong port", "model"),
        ),
        ("FAIL — missing the time", Verdict(False, "missing the time", "model")),
        ("FAIL", Verdict(False, "no reason given", "model")),
        ("\n\n  PASS\nit does", Verdict(True, "it does", "model")),
    ],
)
def test_an_answer_starting_with_pass_or_fail_is_that_verdict_with_its_reasons(
    answer: str, expected: Verdict
) -> None:
    assert parse_verdict(answer) == expected


@pytest.mark.parametrize("answer", ["", "   ", "Looks fine to me", "PASSABLE"])
def test_an_answer_that_is_neither_pass_nor_fail_is_a_failed_check_that_says_so(
    answer: str,
) -> None:
    verdict = parse_verdict(answer)
    assert not verdict.passed
    assert verdict.reasons.startswith(("the verifier answered neither", "the verifier gave an"))


def test_very_long_reasons_are_cut() -> None:
    assert len(parse_verdict("FAIL\n" + "x" * 10_000).reasons) == 2000


def test_the_feedback_names_the_failed_check_and_its_reasons() -> None:
    assert Verdict(False, "no port", "model").feedback() == f"{CHECK_FAILED} no port"


def test_the_verifier_is_given_the_task_its_criteria_the_result_and_the_files() -> None:
    result = AttemptResult(status="success", summary="High water 06:12.", artifacts=("t.md",))
    prompt = verifier_prompt(_TASK, result, _TASK.success_criteria)
    for part in ("Read the tide table.", "Names high water.", "High water 06:12.", "t.md"):
        assert part in prompt
    assert "(no result text)" in verifier_prompt(replace(_TASK), AttemptResult("success"), "x")


def test_a_checker_may_say_the_task_itself_is_wrong() -> None:
    verdict = parse_verdict("TASK_WRONG: the criteria ask for the opposite of the objective")
    assert (verdict.passed, verdict.task_wrong) == (False, True)
    assert verdict.reasons == "the criteria ask for the opposite of the objective"
    assert verdict.feedback().startswith("The checker says the task itself is wrong")
    assert parse_verdict("Task wrong\nimpossible").task_wrong
    assert not parse_verdict("FAIL\nnot yet").task_wrong
