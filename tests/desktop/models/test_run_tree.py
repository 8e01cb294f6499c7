"""`RunTree`: `plan/get` snapshots and the coordinator's run events of the shown thread (every
thread's plans: `test_run_tree_threads.py`)."""

from __future__ import annotations

from desktop.models.run_tree import (
    RunTree,
    can_cancel,
    can_retry,
    elapsed_seconds,
    format_elapsed,
)
from sidecar.protocol import (
    PlanGetResult,
    PlanInfo,
    PlanUpdate,
    SubagentEvent,
    TaskUpdate,
    Token,
)
from tests.desktop.coord_support import plan, task
from tests.desktop.support import RunScript


def loaded(*plans: PlanInfo, autonomous: bool = False) -> RunTree:
    tree = RunTree()
    tree.select("t1")
    tree.load(PlanGetResult(thread_id="t1", autonomous=autonomous, plans=plans))
    return tree


def test_task_updates_move_a_task_from_running_to_succeeded_with_its_elapsed_time():
    tree = loaded(plan(task("a"), task("b")))
    changed: list[tuple[str, str]] = []
    tree.task_changed.connect(lambda p, t: changed.append((p, t)))
    run = RunScript()
    tree.apply(run(TaskUpdate(task=task("a", "running", attempt=1, started_at=100.0))))
    node = tree.task("p1", "a")
    assert node is not None and node.info.status == "running"
    assert elapsed_seconds(node.info, now=112.5) == 12.5
    assert can_cancel(node.info) and not can_retry(node.info)
    done = task("a", "succeeded", attempt=1, started_at=100.0, finished_at=130.0, tokens_in=7)
    tree.apply(run(TaskUpdate(task=done)))
    assert node.info.status == "succeeded" and node.info.tokens_in == 7
    assert elapsed_seconds(node.info, now=999.0) == 30.0
    assert format_elapsed(30.0) == "0:30" and format_elapsed(3725.0) == "1:02:05"
    assert changed == [("p1", "a"), ("p1", "a")]


def test_a_task_not_started_has_no_elapsed_time_and_failed_tasks_can_be_retried():
    assert elapsed_seconds(task("a"), now=5.0) is None
    for status in ("failed", "cancelled", "skipped"):
        assert can_retry(task("a", status)) and not can_cancel(task("a", status))
    assert can_cancel(task("a", "waiting"))


def test_repeated_events_are_ignored():
    tree = loaded(plan(task("a")))
    run = RunScript()
    first = run(TaskUpdate(task=task("a", "running")))
    tree.apply(first)
    tree.apply(first.model_copy(update={"event": TaskUpdate(task=task("a", "failed"))}))
    node = tree.task("p1", "a")
    assert node is not None and node.info.status == "running"


def test_events_arriving_while_loading_are_replayed_over_the_snapshot():
    tree = RunTree()
    tree.select("t1")
    run = RunScript()
    tree.apply(run(TaskUpdate(task=task("a", "running"))))
    tree.apply(run(SubagentEvent(task_id="a", event={"type": "token", "text": "hi"})))
    tree.load(PlanGetResult(thread_id="t1", autonomous=True, plans=(plan(task("a")),)))
    node = tree.task("p1", "a")
    assert node is not None and node.info.status == "running"
    assert [entry.text for entry in node.activity.entries] == ["hi"]
    assert tree.autonomous and not tree.loading


def test_a_plan_update_adds_the_new_plan_version_and_keeps_seen_activity():
    tree = loaded(plan(task("a", "running")))
    run = RunScript()
    tree.apply(run(SubagentEvent(task_id="a", event=Token(text="x").model_dump())))
    changed: list[str] = []
    tree.plan_changed.connect(changed.append)
    tree.apply(run(PlanUpdate(plan=plan(task("a", "succeeded"), task("b")))))
    tree.apply(run(PlanUpdate(plan=plan(task("z", plan_id="p2"), plan_id="p2"))))
    assert [p.id for p in tree.plans] == ["p1", "p2"] and changed == ["p1", "p2"]
    assert [n.info.id for n in tree.tasks("p1")] == ["a", "b"]
    node = tree.task("p1", "a")
    assert node is not None and len(node.activity) == 1


def test_subagent_events_go_to_the_newest_plan_having_the_task():
    tree = loaded(plan(task("a")), plan(task("a", plan_id="p2"), plan_id="p2"))
    tree.apply(RunScript()(SubagentEvent(task_id="a", event={"type": "token", "text": "x"})))
    old, new = tree.task("p1", "a"), tree.task("p2", "a")
    assert old is not None and new is not None
    assert len(old.activity) == 0 and len(new.activity) == 1


def test_a_task_of_an_unknown_plan_asks_for_a_reload():
    tree = loaded()
    wanted: list[str] = []
    tree.resync_needed.connect(wanted.append)
    tree.apply(RunScript()(TaskUpdate(task=task("a", "running", plan_id="p9"))))
    assert wanted == ["t1"]


def test_a_refused_action_shows_on_the_task_until_it_changes():
    tree = loaded(plan(task("a", "succeeded")))
    tree.set_task_error("p1", "a", "Cancel failed", -32043)
    node = tree.task("p1", "a")
    assert node is not None and (node.error, node.error_code) == ("Cancel failed", -32043)
    tree.apply(RunScript()(TaskUpdate(task=task("a", "failed"))))
    assert node.error is None and node.error_code is None


def test_selecting_another_thread_empties_the_tree_until_loaded():
    tree = loaded(plan(task("a")), autonomous=True)
    tree.select("t2")
    assert tree.plans == () and tree.loading and not tree.autonomous
    tree.load(PlanGetResult(thread_id="t1", autonomous=False, plans=(plan(task("a")),)))
    assert tree.plans == () and tree.loading  # a late reply for the thread shown before
