"""Approving a plan mints grants for the tasks that dispatch a writing strong agent, with the
paths the author named cleaned (paths leaving the workspace are left out); the review gate
accepts changes inside those paths only."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

from sidecar.plans import review_gate
from sidecar.plans.attempt import AttemptContext, AttemptResult
from sidecar.plans.dag import TaskSpec
from sidecar.plans.delegation import mint_for_plan
from sidecar.plans.deps import PlanDeps
from sidecar.plans.profiles import DEFAULT_PROFILES, Profile
from sidecar.plans.review.isolation import create_isolation, load_isolation
from sidecar.plans.review.limits import Deadline
from sidecar.plans.review_gate import gated, inside
from sidecar.store import Store, open_database

PROFILES = {p.id: p for p in DEFAULT_PROFILES} | {
    "scratch": Profile(id="scratch", name="Scratch", kind="codex", workdir="fresh")
}


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(open_database(tmp_path / "atrium.db"))


def _plan(store: Store, *profiles: str) -> str:
    thread = store.create_thread("t")
    store.create_plan("p1", thread.id, "goal", "c1")
    specs = [
        TaskSpec(id=f"t{n}", title=f"T{n}", objective="o", profile=p)
        for n, p in enumerate(profiles)
    ]
    store.replace_open_tasks("p1", "goal", [s.to_json() for s in specs])
    store.set_plan_status("p1", "running")
    return "p1"


def test_only_tasks_of_writing_strong_agents_get_a_grant(store: Store):
    plan_id = _plan(store, "codex", "general", "claude", "scratch")
    grants = mint_for_plan(store, plan_id, store.tasks(plan_id), PROFILES, ["docs"])
    assert [(g.task_id, g.tool, g.paths) for g in grants] == [
        ("t0", "agent_run", ("docs",)),
        ("t2", "agent_run", ("docs",)),
    ]
    assert store.plan_grant(plan_id, "t0", "agents", "agent_run") is not None
    assert store.plan_grant(plan_id, "t1", "agents", "agent_run") is None


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        (["docs/", "./src", "docs"], ("docs", "src")),
        (["/etc", "../up", "a/../../b", ".git/hooks", ""], ()),
        (["."], (".",)),
        ("docs", ()),  # not a list: nothing
        (None, ()),
    ],
)
def test_the_named_paths_are_cleaned_and_outsiders_left_out(
    store: Store, given: object, kept: tuple[str, ...]
):
    plan_id = _plan(store, "codex")
    [grant] = mint_for_plan(store, plan_id, store.tasks(plan_id), PROFILES, given)
    assert grant.paths == kept


@pytest.mark.parametrize(
    ("path", "roots", "expected"),
    [
        ("docs/guide.md", ("docs",), True),
        ("docs", ("docs",), True),
        ("docsearch/x.md", ("docs",), False),
        ("src/a.py", ("docs", "src/a.py"), True),
        ("anything/at/all", (".",), True),
        ("docs/guide.md", (), False),
    ],
)
def test_a_change_is_inside_a_granted_path_by_whole_folder_names(
    path: str, roots: tuple[str, ...], expected: bool
):
    assert inside(path, roots) is expected


def test_a_fresh_folder_agent_is_not_behind_the_gate_and_an_internal_one_neither():
    assert gated(PROFILES["codex"]) and gated(PROFILES["claude"])
    assert not gated(PROFILES["scratch"]) and not gated(PROFILES["general"])


@pytest.mark.anyio
async def test_a_reviewed_result_is_kept_and_a_leftover_copy_removed(store: Store, tmp_path: Path):
    plan_id = _plan(store, "codex")
    [task] = store.tasks(plan_id)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("a\n")
    deps = PlanDeps(
        store=store,
        host=cast(Any, None),
        planner=lambda: None,
        planner_for=lambda _model: None,
        how_to_configure=lambda: "",
        workspace=lambda: workspace,
        data_dir=tmp_path / "data",
    )

    async def never(_payload: dict[str, Any]) -> dict[str, Any]:
        raise AssertionError("nothing to ask")

    ctx = AttemptContext(
        store.get_plan(plan_id).thread_id,  # type: ignore[union-attr]
        task,
        PROFILES["codex"],
        1,
        "resume",
        None,
        lambda _report: None,
        never,
    )
    assert review_gate.reviewed_result(deps, ctx) is None
    result = AttemptResult(status="success", summary="done", artifacts=("a.txt",), tokens_in=3)
    review_gate._store_result(deps, ctx, "reviewed", result)  # pyright: ignore[reportPrivateUsage]
    assert review_gate.reviewed_result(deps, ctx) == result
    root = review_gate.isolation_root(deps, ctx)
    create_isolation(workspace, root, Deadline(30))
    await review_gate.remove_leftover(deps, ctx)
    assert load_isolation(root) is None and not root.exists()
