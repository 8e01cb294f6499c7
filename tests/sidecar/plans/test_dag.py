"""Task plans: parsing the planner's JSON and validating the DAG before anything runs."""

from __future__ import annotations

from typing import Any

import pytest

from sidecar.plans.dag import MAX_TASKS, PlanError, TaskSpec, parse_tasks, validate_plan
from sidecar.plans.profiles import Profile

PROFILES = {
    "general": Profile(id="general", name="General"),
    "researcher": Profile(id="researcher", name="Researcher"),
}


def _task(task_id: str, *deps: str, profile: str = "general", title: str = "") -> TaskSpec:
    return TaskSpec(
        id=task_id,
        title=title or f"Task {task_id}",
        objective=f"do {task_id}",
        profile=profile,
        depends_on=deps,
    )


def _raw(**overrides: Any) -> dict[str, Any]:
    return {"id": "a", "title": "A", "objective": "do a", "profile": "general", **overrides}


def _ids(tasks: list[TaskSpec]) -> list[str]:
    return [t.id for t in tasks]


def _plan_error(tasks: list[TaskSpec], **kwargs: Any) -> str:
    with pytest.raises(PlanError) as info:
        validate_plan(tasks, PROFILES, **kwargs)
    return str(info.value)


# parse_tasks


def test_parsed_tasks_keep_their_fields_and_strip_whitespace() -> None:
    raw = [
        _raw(id=" a ", title=" A "),
        _raw(id="b", depends_on=["a"], success_criteria="tests pass"),
    ]
    first, second = parse_tasks(raw)
    assert first == TaskSpec(id="a", title="A", objective="do a", profile="general")
    assert second.depends_on == ("a",)
    assert second.success_criteria == "tests pass"


def test_a_parsed_task_round_trips_through_its_json() -> None:
    [task] = parse_tasks([_raw(depends_on=["x"], success_criteria="ok")])
    assert parse_tasks([task.to_json()]) == [task]
    assert task.to_json()["depends_on"] == ["x"]


def test_non_string_success_criteria_are_turned_into_text() -> None:
    [task] = parse_tasks([_raw(success_criteria=3)])
    assert task.success_criteria == "3"


@pytest.mark.parametrize("raw", [None, {"tasks": []}, "a", 3])
def test_tasks_that_are_not_a_list_are_refused(raw: object) -> None:
    with pytest.raises(PlanError):
        parse_tasks(raw)


@pytest.mark.parametrize("item", ["a", 3, None, ["a"]])
def test_an_item_that_is_not_an_object_is_refused_by_position(item: object) -> None:
    with pytest.raises(PlanError) as info:
        parse_tasks([_raw(), item])
    assert "#2" in str(info.value)


@pytest.mark.parametrize("key", ["id", "title", "objective", "profile"])
@pytest.mark.parametrize("value", [None, "", "   ", 3, ["x"]])
def test_a_missing_or_empty_required_field_is_refused_naming_it(key: str, value: object) -> None:
    item = _raw()
    if value is None:
        del item[key]
    else:
        item[key] = value
    with pytest.raises(PlanError) as info:
        parse_tasks([item])
    assert key in str(info.value)
    assert "#1" in str(info.value)


@pytest.mark.parametrize("deps", ["a", None, [1], ["a", None], {"a": 1}])
def test_depends_on_that_is_not_a_list_of_ids_is_refused_naming_the_task(deps: object) -> None:
    with pytest.raises(PlanError) as info:
        parse_tasks([_raw(id="b", depends_on=deps)])
    assert "'b'" in str(info.value)
    assert "depends_on" in str(info.value)


# validate_plan


def test_an_empty_plan_is_refused() -> None:
    _plan_error([])


def test_a_plan_of_the_maximum_size_is_accepted() -> None:
    tasks = [_task(f"t{n}") for n in range(MAX_TASKS)]
    assert _ids(validate_plan(tasks, PROFILES)) == _ids(tasks)


def test_a_plan_over_the_maximum_size_is_refused_with_its_size() -> None:
    message = _plan_error([_task(f"t{n}") for n in range(MAX_TASKS + 1)])
    assert str(MAX_TASKS + 1) in message


def test_completed_tasks_left_out_of_a_replan_count_towards_the_maximum() -> None:
    completed = {f"done{n}": _task(f"done{n}") for n in range(5)}
    fits = [_task(f"t{n}") for n in range(MAX_TASKS - 5)]
    assert len(validate_plan(fits, PROFILES, completed=completed)) == MAX_TASKS - 5
    message = _plan_error([*fits, _task("one-more")], completed=completed)
    assert str(MAX_TASKS + 1) in message


def test_completed_tasks_repeated_in_a_replan_are_counted_once() -> None:
    completed = {f"done{n}": _task(f"done{n}") for n in range(5)}
    tasks = [*completed.values(), *(_task(f"t{n}") for n in range(MAX_TASKS - 5))]
    assert len(validate_plan(tasks, PROFILES, completed=completed)) == MAX_TASKS


@pytest.mark.parametrize("bad_id", ["-a", "_a", ".a", "a b", "a/b", "ä", "a" * 65, "a→b"])
def test_a_task_id_outside_the_pattern_is_refused_naming_it(bad_id: str) -> None:
    message = _plan_error([_task(bad_id)])
    assert repr(bad_id) in message


@pytest.mark.parametrize("good_id", ["a", "A1", "1", "a_b-c.d", "a" * 64])
def test_task_ids_within_the_pattern_are_accepted(good_id: str) -> None:
    assert _ids(validate_plan([_task(good_id)], PROFILES)) == [good_id]


def test_a_duplicate_task_id_is_refused_naming_it() -> None:
    message = _plan_error([_task("a"), _task("dup"), _task("dup", title="again")])
    assert "'dup'" in message


def test_an_unknown_profile_is_refused_listing_the_known_ones() -> None:
    message = _plan_error([_task("a"), _task("b", profile="wizard")])
    assert "'b'" in message
    assert "'wizard'" in message
    assert "general" in message
    assert "researcher" in message


def test_a_task_depending_on_itself_is_refused_naming_it() -> None:
    message = _plan_error([_task("a"), _task("b", "a", "b")])
    assert "'b'" in message


def test_a_dependency_on_an_unknown_task_is_refused_naming_both() -> None:
    message = _plan_error([_task("a"), _task("b", "a", "ghost")])
    assert "'b'" in message
    assert "'ghost'" in message


def test_a_two_task_cycle_is_refused_naming_the_path() -> None:
    message = _plan_error([_task("a", "b"), _task("b", "a")])
    assert "a → b → a" in message


def test_a_longer_cycle_behind_a_blocked_task_is_named_without_the_blocked_task() -> None:
    tasks = [
        _task("root"),
        _task("x", "p", "root"),
        _task("p", "q"),
        _task("q", "r"),
        _task("r", "p"),
    ]
    message = _plan_error(tasks)
    assert "p → q → r → p" in message
    assert "x →" not in message
    assert "root" not in message


def test_a_dependency_on_a_completed_task_left_out_of_the_replan_is_satisfied() -> None:
    completed = {"a": _task("a")}
    order = validate_plan([_task("b", "a")], PROFILES, completed=completed)
    assert _ids(order) == ["b"]


def test_a_completed_task_may_be_repeated_unchanged() -> None:
    completed = {"a": _task("a")}
    order = validate_plan([_task("b", "a"), _task("a")], PROFILES, completed=completed)
    assert sorted(_ids(order)) == ["a", "b"]


@pytest.mark.parametrize(
    "changed",
    [
        _task("a", title="renamed"),
        _task("a", profile="researcher"),
        _task("a", "b"),
        TaskSpec(id="a", title="Task a", objective="something else", profile="general"),
    ],
)
def test_changing_a_completed_task_is_refused_naming_it(changed: TaskSpec) -> None:
    message = _plan_error([changed, _task("b")], completed={"a": _task("a")})
    assert "'a'" in message


def test_the_order_puts_dependencies_first_and_keeps_the_given_order_among_ready_tasks() -> None:
    diamond = [_task("d", "b", "c"), _task("c", "a"), _task("b", "a"), _task("a")]
    assert _ids(validate_plan(diamond, PROFILES)) == ["a", "c", "b", "d"]


def test_independent_tasks_come_back_in_the_given_order() -> None:
    tasks = [_task("z"), _task("m"), _task("a")]
    assert _ids(validate_plan(tasks, PROFILES)) == ["z", "m", "a"]


def test_the_order_is_topological_for_a_larger_plan() -> None:
    tasks = [
        _task("e", "d", "b"),
        _task("d", "c"),
        _task("c", "a"),
        _task("b", "a"),
        _task("f"),
        _task("a"),
    ]
    order = _ids(validate_plan(tasks, PROFILES))
    assert sorted(order) == sorted(_ids(tasks))
    position = {task_id: n for n, task_id in enumerate(order)}
    for task in tasks:
        for dep in task.depends_on:
            assert position[dep] < position[task.id]
