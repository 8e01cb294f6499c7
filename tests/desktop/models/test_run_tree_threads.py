"""`RunTree` holds the plans of every thread: `plan/list` loads them, run events of any thread
keep them current, and a plan that ends while its thread is not shown is unread until read."""

from __future__ import annotations

from desktop.models.run_tree import RunTree
from sidecar.protocol import (
    PlanGetResult,
    PlanInfo,
    PlanListResult,
    PlanUpdate,
    SubagentEvent,
    TaskUpdate,
)
from tests.desktop.coord_support import plan, task
from tests.desktop.support import RunScript


def notes_plan(status: str = "running") -> PlanInfo:
    """Plan p2 of thread t2, made after t1's p1."""
    tasks = (task("n", "running", plan_id="p2"),)
    return plan(*tasks, plan_id="p2", thread_id="t2", status=status, created_at=2.0)


def shown_t1_with_every_thread() -> RunTree:
    tree = RunTree()
    tree.select("t1")
    tree.begin_load_all()
    tree.load(PlanGetResult(thread_id="t1", autonomous=False, plans=(plan(task("a")),)))
    tree.load_all(PlanListResult(plans=(notes_plan(), plan(task("a")))))
    return tree


def test_plan_list_loads_every_threads_plans_with_the_shown_thread_first():
    tree = shown_t1_with_every_thread()
    older = plan(task("x", plan_id="p0"), plan_id="p0", thread_id="t3", created_at=0.5)
    tree.load_all(PlanListResult(plans=(older,)))
    assert tree.threads() == ["t1", "t2", "t3"]  # then by their newest plan
    assert [p.id for p in tree.plans] == ["p1"]
    assert [p.id for p in tree.plans_of("t2")] == ["p2"] and tree.thread_of("p2") == "t2"
    assert not tree.loading and not tree.loading_all


def test_run_events_of_another_thread_keep_its_plans_current():
    tree = shown_t1_with_every_thread()
    run = RunScript(thread_id="t2", run_id="bg")
    tree.apply(run(TaskUpdate(task=task("n", "succeeded", plan_id="p2"))))
    tree.apply(run(SubagentEvent(task_id="n", plan_id="p2", event={"type": "token", "text": "hi"})))
    node = tree.task("p2", "n")
    assert node is not None and node.info.status == "succeeded"
    assert [entry.text for entry in node.activity.entries] == ["hi"]
    assert tree.find_task("n", "t2") is node and tree.find_task("n") is None  # not t1's


def test_a_plan_that_ends_while_its_thread_is_not_shown_is_unread_until_its_thread_is():
    tree = shown_t1_with_every_thread()
    read: list[str] = []
    tree.read_changed.connect(read.append)
    tree.apply(RunScript(thread_id="t2", run_id="bg")(PlanUpdate(plan=notes_plan("completed"))))
    assert tree.is_unread("p2") and tree.unread_count("t2") == 1 and read == ["p2"]
    tree.select("t2")
    assert not tree.is_unread("p2") and tree.unread_count("t2") == 0


def test_opening_the_plan_reads_it_and_a_plan_of_the_shown_thread_is_never_unread():
    tree = shown_t1_with_every_thread()
    run = RunScript(thread_id="t2", run_id="bg")
    tree.apply(run(PlanUpdate(plan=notes_plan("failed"))))
    tree.mark_read("p2")
    assert not tree.is_unread("p2")
    tree.apply(RunScript()(PlanUpdate(plan=plan(task("a", "succeeded"), status="completed"))))
    assert not tree.is_unread("p1")


def test_a_plan_seen_ended_for_the_first_time_is_not_news():
    tree = RunTree()
    tree.select("t1")
    tree.load_all(PlanListResult(plans=(notes_plan("completed"),)))
    assert not tree.is_unread("p2")


def test_events_while_plan_list_loads_are_replayed_over_its_snapshot():
    tree = RunTree()
    tree.select(None)
    tree.begin_load_all()
    run = RunScript(thread_id="t2", run_id="bg")
    tree.apply(run(TaskUpdate(task=task("n", "succeeded", plan_id="p2"))))
    assert tree.plans_of("t2") == ()
    tree.load_all(PlanListResult(plans=(notes_plan(),)))
    node = tree.task("p2", "n")
    assert node is not None and node.info.status == "succeeded"


def test_a_task_of_an_unknown_plan_of_another_thread_asks_for_the_list_once():
    tree = shown_t1_with_every_thread()
    wanted: list[str] = []
    tree.resync_needed.connect(wanted.append)
    run = RunScript(thread_id="t2", run_id="bg")
    tree.apply(run(TaskUpdate(task=task("z", "running", plan_id="p9"))))
    tree.apply(run(TaskUpdate(task=task("z", "succeeded", plan_id="p9"))))
    assert wanted == ["t2"]


def test_showing_another_thread_keeps_what_is_known_of_it_until_its_plans_load():
    tree = shown_t1_with_every_thread()
    tree.select("t2")
    assert [p.id for p in tree.plans] == ["p2"] and tree.loading
    assert tree.threads() == ["t2", "t1"]
    tree.load(PlanGetResult(thread_id="t2", autonomous=True, plans=()))
    assert tree.plans == () and tree.autonomous and tree.task("p2", "n") is None


def test_a_failed_list_is_said_until_a_list_loads():
    tree = RunTree()
    tree.begin_load_all()
    tree.fail_load_all("Loading the plans of every thread failed: disk")
    assert tree.error is not None and not tree.loading_all
    tree.begin_load_all()
    tree.load_all(PlanListResult(plans=(notes_plan(),)))
    assert tree.error is None and tree.threads() == ["t2"]
