"""Plan grants: minted per task when a plan is approved, counted only while the plan runs,
listed for the grants panel, gone with the plan, revocable one by one."""

from __future__ import annotations

from sidecar.store import Store
from sidecar.store.plan_grants import PlanGrant


def _running_plan(store: Store, plan_id: str = "plan-1") -> str:
    thread = store.create_thread("Refactor")
    store.create_plan(plan_id, thread.id, "tidy the code", "call-1")
    store.set_plan_status(plan_id, "running")
    return thread.id


def _grant(task_id: str, *paths: str, plan_id: str = "plan-1") -> PlanGrant:
    return PlanGrant(plan_id, task_id, "agents", "agent_run", paths, 0.0)


def test_a_minted_grant_covers_its_task_while_the_plan_runs(store: Store):
    _running_plan(store)
    store.mint_plan_grants("plan-1", [_grant("fix", "src", "docs/a.md")])
    found = store.plan_grant("plan-1", "fix", "agents", "agent_run")
    assert found is not None and found.paths == ("src", "docs/a.md")
    assert store.plan_grant("plan-1", "other", "agents", "agent_run") is None
    assert store.plan_grant("plan-1", "fix", "workspace", "write") is None


def test_a_grant_ends_with_its_plan(store: Store):
    _running_plan(store)
    store.mint_plan_grants("plan-1", [_grant("fix")])
    store.set_plan_status("plan-1", "completed")
    assert store.plan_grant("plan-1", "fix", "agents", "agent_run") is None
    assert store.live_plan_grants() == []
    store.set_plan_status("plan-1", "running")  # the deleted grant does not come back
    assert store.plan_grant("plan-1", "fix", "agents", "agent_run") is None


def test_live_grants_are_listed_with_their_plan_and_thread(store: Store):
    thread_id = _running_plan(store)
    store.mint_plan_grants("plan-1", [_grant("a"), _grant("b", "lib")])
    views = store.live_plan_grants()
    assert sorted(v.grant.task_id for v in views) == ["a", "b"]
    assert {(v.thread_id, v.thread_title, v.goal) for v in views} == {
        (thread_id, "Refactor", "tidy the code")
    }


def test_minting_again_replaces_the_plans_grants(store: Store):
    _running_plan(store)
    store.mint_plan_grants("plan-1", [_grant("a"), _grant("b")])
    store.mint_plan_grants("plan-1", [_grant("c")])
    assert [v.grant.task_id for v in store.live_plan_grants()] == ["c"]


def test_a_revoked_grant_no_longer_covers_its_task(store: Store):
    _running_plan(store)
    store.mint_plan_grants("plan-1", [_grant("a")])
    assert store.revoke_plan_grant("plan-1", "a", "agents", "agent_run") is True
    assert store.revoke_plan_grant("plan-1", "a", "agents", "agent_run") is False
    assert store.plan_grant("plan-1", "a", "agents", "agent_run") is None
