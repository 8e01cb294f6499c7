"""`CoordController` over a recording sender: actions → requests, replies → `RunTree`."""

from __future__ import annotations

from desktop.controllers.plans import CoordController, describe_coord_error
from sidecar.protocol import (
    AutonomousParams,
    CoordEmpty,
    CoordErrorCode,
    ErrorObject,
    PlanGetParams,
    PlanGetResult,
    PlanListParams,
    PlanListResult,
    ProfileInfo,
    ProfileSetParams,
    TaskRef,
    TaskRetryResult,
    TaskUpdate,
)
from tests.desktop.coord_support import plan, task
from tests.desktop.support import FakeSender, RunScript


def shown(fake_sender: FakeSender, *plans_: object, autonomous: bool = False) -> CoordController:
    coord = CoordController(fake_sender.api)
    coord.show_thread("t1")
    params, pending = fake_sender.last("plan/get")
    assert params == PlanGetParams(thread_id="t1")
    pending.resolve(PlanGetResult(thread_id="t1", autonomous=autonomous, plans=plans_))
    return coord


def test_showing_a_thread_loads_its_plans_and_run_events_keep_them_current(
    fake_sender: FakeSender,
):
    coord = shown(fake_sender, plan(task("a")), autonomous=True)
    assert coord.tree.autonomous
    coord.handle_run_event(RunScript()(TaskUpdate(task=task("a", "running"))))
    node = coord.tree.task("p1", "a")
    assert node is not None and node.info.status == "running"
    assert coord.show_thread("t1") is None  # already shown


def test_cancel_sends_task_cancel_and_reloads_the_plan(fake_sender: FakeSender):
    coord = shown(fake_sender, plan(task("a", "running")))
    coord.cancel_task("p1", "a")
    params, pending = fake_sender.last("task/cancel")
    assert params == TaskRef(thread_id="t1", task_id="a", plan_id="p1")
    pending.resolve(CoordEmpty())
    assert fake_sender.methods()[-1] == "plan/get"


def test_retry_sends_task_retry(fake_sender: FakeSender):
    coord = shown(fake_sender, plan(task("a", "failed")))
    coord.retry_task("p1", "a")
    params, pending = fake_sender.last("task/retry")
    assert params == TaskRef(thread_id="t1", task_id="a", plan_id="p1")
    pending.resolve(TaskRetryResult(run_id="r2"))
    node = coord.tree.task("p1", "a")
    assert node is not None and node.error is None


def test_a_refused_task_action_is_shown_on_the_task_with_its_code(fake_sender: FakeSender):
    coord = shown(fake_sender, plan(task("a", "succeeded")))
    reported: list[str] = []
    coord.error_reported.connect(reported.append)
    coord.retry_task("p1", "a")
    error = ErrorObject(code=CoordErrorCode.TASK_NOT_RETRYABLE, message="a succeeded")
    fake_sender.last("task/retry")[1].reject(error)
    node = coord.tree.task("p1", "a")
    assert node is not None and node.error_code == CoordErrorCode.TASK_NOT_RETRYABLE
    assert node.error is not None and "a succeeded" in node.error
    assert len(reported) == 1


def test_the_autonomy_switch_follows_the_reply(fake_sender: FakeSender):
    coord = shown(fake_sender)
    coord.set_autonomous(True)
    params, pending = fake_sender.last("thread/set_autonomous")
    assert params == AutonomousParams(thread_id="t1", autonomous=True)
    assert not coord.tree.autonomous
    pending.resolve(CoordEmpty())
    assert coord.tree.autonomous
    coord.set_autonomous(False)
    fake_sender.last("thread/set_autonomous")[1].reject(ErrorObject(code=-32001, message="gone"))
    assert coord.tree.autonomous and coord.tree.error is not None


def test_a_failed_load_is_shown_in_the_tree(fake_sender: FakeSender):
    coord = CoordController(fake_sender.api)
    coord.show_thread("t1")
    fake_sender.last("plan/get")[1].reject(ErrorObject(code=-32001, message="no such thread"))
    assert coord.tree.error is not None and not coord.tree.loading


def test_profiles_are_listed_and_saved_whole(fake_sender: FakeSender):
    coord = CoordController(fake_sender.api)
    coord.list_profiles()
    assert fake_sender.last("profile/list")[0] == CoordEmpty()
    profiles = (ProfileInfo(id="writer", name="Writer"),)
    coord.save_profiles(profiles)
    assert fake_sender.last("profile/set")[0] == ProfileSetParams(profiles=profiles)


def test_coordinator_codes_read_as_sentences():
    error = ErrorObject(code=CoordErrorCode.TASK_NOT_RUNNING, message="a is pending")
    assert describe_coord_error(error) == "The task is not running (a is pending)"
    assert describe_coord_error(ErrorObject(code=-1, message="other")) == "other"


def test_refresh_loads_every_threads_plans_and_the_shown_threads(fake_sender: FakeSender):
    coord = shown(fake_sender, plan(task("a")))
    coord.refresh()
    assert fake_sender.methods()[-2:] == ["plan/list", "plan/get"]
    assert fake_sender.last("plan/list")[0] == PlanListParams()
    other = plan(task("n", plan_id="p2"), plan_id="p2", thread_id="t2")
    fake_sender.last("plan/list")[1].resolve(PlanListResult(plans=(other,)))
    assert coord.tree.thread_of("p2") == "t2"


def test_a_task_of_another_thread_is_acted_on_in_its_own_thread(fake_sender: FakeSender):
    coord = shown(fake_sender, plan(task("a")))
    coord.load_all()
    other = plan(task("n", "running", plan_id="p2"), plan_id="p2", thread_id="t2")
    fake_sender.last("plan/list")[1].resolve(PlanListResult(plans=(other,)))
    coord.cancel_task("p2", "n")
    params, pending = fake_sender.last("task/cancel")
    assert params == TaskRef(thread_id="t2", task_id="n", plan_id="p2")
    pending.resolve(CoordEmpty())
    assert fake_sender.methods()[-1] == "plan/list"  # its dependents were skipped too


def test_a_missed_event_of_another_thread_reloads_the_list_and_a_failed_list_says_so(
    fake_sender: FakeSender,
):
    coord = shown(fake_sender, plan(task("a")))
    coord.handle_run_event(RunScript("t2", "bg")(TaskUpdate(task=task("z", plan_id="p9"))))
    assert fake_sender.methods()[-1] == "plan/list"
    fake_sender.last("plan/list")[1].reject(ErrorObject(code=-32603, message="disk"))
    assert coord.tree.error is not None and "disk" in coord.tree.error
    assert not coord.tree.loading_all
