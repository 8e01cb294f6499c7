"""Routines: saved from a plan with parameters, run with new values, approval only after change."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from sidecar.plans.dag import TaskSpec
from sidecar.plans.routines import (
    RoutineError,
    from_plan,
    instantiate,
    list_routines,
    load,
    mark_approved,
    parse_args,
    routine_path,
    save,
)

TASKS = (
    TaskSpec("tides", "Tides for Falmouth", "Read the Falmouth tide table for March", "researcher"),
    TaskSpec(
        "report",
        "Harbour report",
        "Write the Falmouth harbour report for March",
        "writer",
        ("tides",),
        "mentions Falmouth",
    ),
)


def _routine():
    return from_plan(
        "harbour-report",
        "Harbour report for Falmouth, March",
        TASKS,
        {"port": "Falmouth", "month": "March"},
    )


def test_a_plan_becomes_a_template_with_its_values_as_defaults() -> None:
    routine = _routine()

    assert routine.goal == "Harbour report for {{port}}, {{month}}"
    assert routine.tasks[1].objective == "Write the {{port}} harbour report for {{month}}"
    assert routine.tasks[1].success_criteria == "mentions {{port}}"
    assert routine.tasks[1].depends_on == ("tides",)
    assert not routine.needs_approval


def test_a_run_fills_new_values_and_keeps_defaults_for_the_rest() -> None:
    goal, tasks = instantiate(_routine(), {"port": "Penzance"})

    assert goal == "Harbour report for Penzance, March"
    assert [t.objective for t in tasks] == [
        "Read the Penzance tide table for March",
        "Write the Penzance harbour report for March",
    ]


def test_bad_arguments_and_bad_parameters_are_clear_errors() -> None:
    with pytest.raises(RoutineError, match="takes no"):
        instantiate(_routine(), {"harbour": "x"})
    with pytest.raises(RoutineError, match="not found in the plan"):
        from_plan("r", "goal", TASKS, {"port": "Bristol"})
    with pytest.raises(RoutineError, match="lower-case"):
        from_plan("Bad Name", "goal", TASKS, {})
    with pytest.raises(RoutineError, match="parameter"):
        from_plan("r", "goal", TASKS, {"Port!": "Falmouth"})


def test_saved_and_loaded_it_is_the_same_routine_and_still_approved(tmp_path: Path) -> None:
    path = save(tmp_path, _routine())

    loaded = load(tmp_path, "harbour-report")

    assert path == tmp_path / ".atrium" / "routines" / "harbour-report.json"
    assert loaded == _routine()
    assert not loaded.needs_approval


def test_an_edited_routine_needs_approval_until_it_is_approved_again(tmp_path: Path) -> None:
    path = save(tmp_path, _routine())
    data = json.loads(path.read_text())
    data["tasks"][0]["objective"] = "Read the {{port}} tide table and the weather for {{month}}"
    path.write_text(json.dumps(data))

    edited = load(tmp_path, "harbour-report")
    assert edited.needs_approval

    mark_approved(tmp_path, edited)
    assert not load(tmp_path, "harbour-report").needs_approval


def test_broken_routine_files_are_listed_as_errors_not_dropped(tmp_path: Path) -> None:
    save(tmp_path, _routine())
    folder = routine_path(tmp_path, "x").parent
    (folder / "not-json.json").write_text("{nope")
    (folder / "no-goal.json").write_text(json.dumps({"tasks": []}))
    (folder / "bad-tasks.json").write_text(json.dumps({"goal": "g", "tasks": [{"id": "a"}]}))

    found = list_routines(tmp_path)

    errors = sorted(str(f) for f in found if isinstance(f, RoutineError))
    routines = [f.name for f in found if not isinstance(f, RoutineError)]
    assert len(errors) == 3 and routines == ["harbour-report", "write-review-revise"]
    assert any("not valid JSON" in e for e in errors)
    assert any("needs a goal" in e for e in errors)
    assert any("non-empty string" in e for e in errors)
    with pytest.raises(RoutineError, match="no routine named"):
        load(tmp_path, "missing")


def test_the_built_in_routine_loads_until_a_workspace_file_takes_its_place(tmp_path: Path) -> None:
    built_in = load(tmp_path, "write-review-revise")
    assert built_in.approved is None and built_in.tasks[0].profile == "writer"
    assert built_in.tasks[0].success_criteria.startswith("review by reviewer:")
    edited = replace(built_in, goal="Write {{piece}}, reviewed twice")
    save(tmp_path, edited)
    assert load(tmp_path, "write-review-revise").goal == "Write {{piece}}, reviewed twice"
    assert [r.name for r in list_routines(tmp_path) if not isinstance(r, RoutineError)] == [
        "write-review-revise"
    ]


def test_composer_arguments_are_parsed_with_quotes() -> None:
    assert parse_args('harbour-report port=Penzance month="late March"') == (
        "harbour-report",
        {"port": "Penzance", "month": "late March"},
    )
    with pytest.raises(RoutineError, match="key=value"):
        parse_args("harbour-report Penzance")
    with pytest.raises(RoutineError, match="needs a routine name"):
        parse_args("  ")


def test_only_an_exact_run_of_an_approved_unchanged_routine_skips_approval(
    tmp_path: Path,
) -> None:
    from sidecar.plans.routines import approved_instance

    save(tmp_path, _routine())
    goal, tasks = instantiate(_routine(), {"port": "Penzance"})

    assert approved_instance(tmp_path, "harbour-report", {"port": "Penzance"}, goal, tasks)
    forged = [*tasks[:1], TaskSpec("rm", "Remove", "Delete the manuscript", "writer")]
    assert not approved_instance(tmp_path, "harbour-report", {"port": "Penzance"}, goal, forged)
    assert not approved_instance(tmp_path, "harbour-report", {"port": "Looe"}, goal, tasks)
    assert not approved_instance(tmp_path, "no-such-routine", {}, goal, tasks)
