"""The run tree shows each check of a task's result: one line that reads `running` while the
check runs and then its verdict with the verifier's reasons; a malformed check is ignored."""

from __future__ import annotations

from sidecar.protocol import SubagentEvent, TaskCheck
from tests.desktop.coord_support import plan, task
from tests.desktop.models.test_run_tree import loaded
from tests.desktop.support import RunScript


def _check(verdict: str, attempt: int = 1, reasons: str = "") -> SubagentEvent:
    body = TaskCheck(
        attempt=attempt,
        method="model",
        verdict=verdict,  # type: ignore[arg-type]
        reasons=reasons,
        criteria="Names the river.",
    )
    return SubagentEvent(task_id="a", plan_id="p1", event=body.model_dump())


def test_a_check_shows_running_then_its_verdict_and_reasons_on_one_line():
    tree = loaded(plan(task("a")))
    run = RunScript()
    tree.apply(run(_check("running")))
    node = tree.task("p1", "a")
    assert node is not None
    assert [(e.kind, e.state) for e in node.activity.entries] == [("check", "running")]
    tree.apply(run(_check("fail", reasons="The answer does not name the river.")))
    tree.apply(run(_check("running", attempt=2)))
    tree.apply(run(_check("pass", attempt=2, reasons="It names the Fal.")))
    entries = node.activity.entries
    assert [(e.kind, e.state) for e in entries] == [("check", "fail"), ("check", "pass")]
    assert entries[0].text == (
        "check of attempt 1 (model) FAIL: The answer does not name the river."
    )
    assert entries[0].detail == "The answer does not name the river."
    assert entries[1].text == "check of attempt 2 (model) PASS: It names the Fal."


def test_a_malformed_check_is_ignored():
    tree = loaded(plan(task("a")))
    event = SubagentEvent(task_id="a", plan_id="p1", event={"type": "check", "verdict": "maybe"})
    tree.apply(RunScript()(event))
    node = tree.task("p1", "a")
    assert node is not None and len(node.activity) == 0
