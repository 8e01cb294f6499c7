"""The fake sidecar's coordinator: `profile/*`, `plan/get`, `plan/list`, `task/*`,
`thread/set_autonomous` and scripted plan runs (imported by `fake_sidecar.py`, which runs as a
script). A task's subagent events and its result envelope are kept with the plan (in the fake's
database, so they survive a restart) for `task/events` and `task/envelopes`.

Profiles start as `writer` (internal) and `coder` (claude_code); `profile/set` refuses a profile
whose id starts with `invalid` (`PROFILES_INVALID`). The text of `run/start` picks a script:

- `plan`: propose a plan of tasks a → b → c (`plan_approval`, or run it at once when the thread
  is autonomous). Approving runs every task (running → subagent events → succeeded) and the
  plan completes; edited tasks replace the proposal; rejecting ends the plan `rejected`.
- `stall`: a running plan whose task `a` stalls: `escalation` (retry / reassign / skip / abort).
- `two`: two subagent interrupts at once (a question from task `a`, an approval from task `b`);
  answering one leaves the run waiting on the other.

`task/cancel` cancels a running or waiting task (`TASK_NOT_RUNNING` otherwise); `task/retry`
re-runs a failed, cancelled or skipped task in a new run (`TASK_NOT_RETRYABLE` otherwise).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

from sidecar.protocol import (
    ApprovalInterrupt,
    CoordErrorCode,
    EnvelopeInfo,
    EscalationInterrupt,
    InterruptEvent,
    InterruptInfo,
    PlanApprovalInterrupt,
    PlanInfo,
    PlanUpdate,
    ProfileInfo,
    ProfileSetParams,
    QuestionInterrupt,
    RunEventBody,
    RunFinished,
    RunStarted,
    SubagentEvent,
    TaskInfo,
    TaskUpdate,
)

Handler = Callable[[dict[str, Any]], Any]
Fail = Callable[[int, str], Exception]
"""Builds the fake sidecar's error-reply exception from a code and a message."""
SCRIPTS = ("plan", "stall", "two")
PROFILES = (
    ProfileInfo(id="writer", name="Writer"),
    ProfileInfo(id="coder", name="Coder", kind="claude_code", stall_seconds=60.0),
)
PROPOSAL = (
    ("a", "Outline", "Outline the chapter", "writer", ()),
    ("b", "Draft", "Draft the chapter", "coder", ("a",)),
    ("c", "Review", "Review the draft", "writer", ("b",)),
)


class RunLike(Protocol):
    """What the scripts need of the fake sidecar's `Run`."""

    id: str
    thread: dict[str, Any]

    def emit(self, event: RunEventBody) -> None: ...
    def finish(self, event: RunEventBody, status: str, error: str | None = None) -> None: ...
    def echo(self, answer: str) -> None: ...


class FakeCoord:
    """Coordinator state in the fake's database (`db["coord"]`) and its methods."""

    def __init__(
        self,
        db: dict[str, Any],
        thread: Callable[[str], dict[str, Any]],
        new_run: Callable[[dict[str, Any]], RunLike],
        fail: Fail,
    ) -> None:
        self.state: dict[str, Any] = db.setdefault(
            "coord", {"profiles": [p.model_dump(mode="json") for p in PROFILES], "threads": {}}
        )
        self._thread = thread
        self._new_run = new_run
        self._fail = fail

    def handler(self, method: str) -> Handler | None:
        return getattr(self, "do_" + method.replace("/", "_"), None)

    def entry(self, thread_id: str) -> dict[str, Any]:
        self._thread(thread_id)
        return self.state["threads"].setdefault(thread_id, {"autonomous": False, "plans": []})

    def do_profile_list(self, _params: dict[str, Any]) -> Any:
        return {"profiles": self.state["profiles"], "path": "/tmp/profiles.json", "error": None}

    def do_profile_set(self, params: dict[str, Any]) -> Any:
        profiles = ProfileSetParams.model_validate(params).profiles
        bad = [p.id for p in profiles if p.id.startswith("invalid")]
        if bad:
            raise self._fail(CoordErrorCode.PROFILES_INVALID, f"profile {bad[0]} is not allowed")
        self.state["profiles"] = [p.model_dump(mode="json") for p in profiles]
        return self.do_profile_list({})

    def do_plan_get(self, params: dict[str, Any]) -> Any:
        entry = self.entry(params["thread_id"])
        plans = [wire_plan(plan) for plan in entry["plans"]]
        return {"thread_id": params["thread_id"], "autonomous": entry["autonomous"], "plans": plans}

    def do_plan_list(self, _params: dict[str, Any]) -> Any:
        plans = [p for entry in self.state["threads"].values() for p in entry["plans"]]
        plans.sort(key=lambda p: -p["created_at"])
        return {"plans": [wire_plan(plan) for plan in plans]}

    def do_task_events(self, params: dict[str, Any]) -> Any:
        plan, task = self.find(params)
        events = plan.get("events", {}).get(task["id"], [])
        return {"events": events[-params.get("limit", 500) :], "has_older": False}

    def do_task_envelopes(self, params: dict[str, Any]) -> Any:
        plan, task = self.find(params)
        return {"envelopes": plan.get("envelopes", {}).get(task["id"], [])}

    def do_thread_set_autonomous(self, params: dict[str, Any]) -> Any:
        self.entry(params["thread_id"])["autonomous"] = params["autonomous"]
        return {}

    def find(self, params: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        plans = self.entry(params["thread_id"])["plans"]
        for plan in reversed(plans):
            if params.get("plan_id") in (None, plan["id"]):
                for task in plan["tasks"]:
                    if task["id"] == params["task_id"]:
                        return plan, task
        raise self._fail(CoordErrorCode.NO_SUCH_TASK, f"no task {params['task_id']}")

    def do_task_cancel(self, params: dict[str, Any]) -> Any:
        _plan, task = self.find(params)
        if task["status"] not in ("running", "waiting"):
            raise self._fail(
                CoordErrorCode.TASK_NOT_RUNNING, f"task {task['id']} is {task['status']}"
            )
        task.update(status="cancelled", finished_at=time.time(), stalled=False)
        return {}

    def do_task_retry(self, params: dict[str, Any]) -> Any:
        plan, task = self.find(params)
        if task["status"] not in ("failed", "cancelled", "skipped"):
            raise self._fail(
                CoordErrorCode.TASK_NOT_RETRYABLE, f"task {task['id']} is {task['status']}"
            )
        run = self._new_run(self._thread(params["thread_id"]))

        def go() -> None:
            run.emit(RunStarted(resumed=True))
            Script(run, plan).run_task(task)
            run.echo(f"Retried {task['id']}.")

        return {"run_id": run.id}, go

    def script(self, run: RunLike, text: str) -> None:
        """Run the script `text` names (one of `SCRIPTS`)."""
        plans = self.entry(run.thread["id"])["plans"]
        if text == "two":
            Script(run, None).two_questions()
            return
        plan = proposal(run)
        plans.append(plan)
        script = Script(run, plan)
        if text == "stall":
            script.stall()
        elif self.entry(run.thread["id"])["autonomous"]:
            script.run_plan()
        else:
            script.propose(tuple(p["id"] for p in self.state["profiles"]))

    def resumes(self, interrupt: dict[str, Any]) -> bool:
        return interrupt["kind"] in ("plan_approval", "escalation") or bool(
            interrupt.get("task_id")
        )

    def resume(self, run: RunLike, interrupt: dict[str, Any], value: dict[str, Any]) -> None:
        run.emit(RunStarted(resumed=True))
        plans = self.entry(run.thread["id"])["plans"]
        plan = next((p for p in plans if p["id"] == interrupt.get("plan_id")), None)
        script = Script(run, plan)
        if interrupt["kind"] == "plan_approval":
            script.decide_plan(value)
        elif interrupt["kind"] == "escalation":
            script.escalate(interrupt["task_id"], value)
        elif run.thread["interrupts"]:
            run.finish(RunFinished(outcome="interrupted"), "interrupted")
        else:
            run.echo("Both answered.")


def wire_plan(plan: dict[str, Any]) -> dict[str, Any]:
    """A plan as the wire has it (without the events and envelopes the fake keeps with it)."""
    return {k: v for k, v in plan.items() if k not in ("events", "envelopes")}


def proposal(run: RunLike) -> dict[str, Any]:
    now = time.time()
    plan_id = "p-" + run.id
    tasks = [task_info(plan_id, spec) for spec in PROPOSAL]
    plan = PlanInfo(
        id=plan_id, thread_id=run.thread["id"], goal="Write chapter one", version=1,
        status="awaiting_approval", created_at=now, tasks=tuple(tasks),
    )  # fmt: skip
    return plan.model_dump(mode="json")


def task_info(plan_id: str, spec: tuple[str, str, str, str, tuple[str, ...]]) -> TaskInfo:
    task_id, title, objective, profile, depends_on = spec
    return TaskInfo(
        plan_id=plan_id, id=task_id, title=title, objective=objective, profile=profile,
        depends_on=depends_on, success_criteria="", status="pending", attempt=0,
    )  # fmt: skip


class Script:
    """One run's steps on one plan (a dict in the fake's database, changed in place)."""

    def __init__(self, run: RunLike, plan: dict[str, Any] | None) -> None:
        self.run = run
        self.plan = plan or {}

    def plan_update(self, status: str) -> None:
        self.plan["status"] = status
        self.run.emit(PlanUpdate(plan=PlanInfo.model_validate(wire_plan(self.plan))))

    def task_update(self, task: dict[str, Any], **changes: Any) -> None:
        task.update(changes)
        self.run.emit(TaskUpdate(task=TaskInfo.model_validate(task)))

    def subagent(self, task: dict[str, Any], event: dict[str, Any]) -> None:
        nested = SubagentEvent(task_id=task["id"], plan_id=self.plan["id"],
                               sub_thread_id="s-" + task["id"], event=event)  # fmt: skip
        self.plan.setdefault("events", {}).setdefault(task["id"], []).append(
            nested.model_dump(mode="json")
        )
        self.run.emit(nested)

    def result(self, task: dict[str, Any]) -> None:
        """The task's result envelope, to the main agent."""
        thread = "thread/" + self.plan["thread_id"]
        envelope = EnvelopeInfo(
            id=f"{self.plan['id']}:{task['id']}:final", sender=f"{thread}/task/{task['id']}",
            receiver=thread, kind="final", created_at=time.time(),
            payload={"status": "succeeded", "findings": f"{task['id']} done"},
        )  # fmt: skip
        self.plan.setdefault("envelopes", {})[task["id"]] = [envelope.model_dump(mode="json")]

    def pause(self, interrupt: InterruptInfo) -> None:
        self.run.thread["interrupts"].append(interrupt.model_dump(mode="json"))
        self.run.emit(InterruptEvent(interrupt=interrupt))

    def propose(self, profiles: tuple[str, ...]) -> None:
        self.plan_update("awaiting_approval")
        specs = [{k: t[k] for k in ("id", "title", "objective", "profile", "depends_on")}
                 for t in self.plan["tasks"]]  # fmt: skip
        self.pause(PlanApprovalInterrupt.model_validate({
            "id": "int-" + self.run.id, "title": "Approve the plan", "body": "",
            "plan_id": self.plan["id"], "version": 1, "goal": self.plan["goal"],
            "tasks": specs, "profiles": profiles,
        }))  # fmt: skip
        self.run.finish(RunFinished(outcome="interrupted"), "interrupted")

    def decide_plan(self, value: dict[str, Any]) -> None:
        if value["decision"] == "reject":
            self.plan_update("rejected")
            self.run.echo(f"Plan rejected: {value.get('reason', '')}")
            return
        if value.get("tasks"):
            self.plan["tasks"] = [
                task_info(self.plan["id"], (t["id"], t["title"], t["objective"], t["profile"],
                                            tuple(t.get("depends_on", ())))).model_dump(mode="json")
                for t in value["tasks"]
            ]  # fmt: skip
        self.run_plan()

    def run_plan(self) -> None:
        self.plan_update("running")
        for task in self.plan["tasks"]:
            self.run_task(task)
        self.plan_update("completed")
        self.run.echo("Plan completed.")

    def run_task(self, task: dict[str, Any]) -> None:
        now, task_id = time.time(), task["id"]
        call_id = "c-" + task_id
        self.task_update(task, status="running", attempt=task["attempt"] + 1, stalled=False,
                         started_at=now - 5, finished_at=None, activity="working")  # fmt: skip
        events: list[dict[str, Any]] = [
            {"type": "tool_call", "call_id": call_id, "server": "workspace", "tool": "write",
             "arguments": {"path": task_id + ".md"}},
            {"type": "tool_progress", "call_id": call_id, "progress": 1, "total": 2,
             "message": "writing " + task_id},
            {"type": "tool_result", "call_id": call_id, "is_error": False, "content": "wrote"},
            {"type": "token", "text": "Done with "},
            {"type": "token", "text": task_id},
        ]  # fmt: skip
        for event in events:
            self.subagent(task, event)
        self.result(task)
        self.task_update(task, status="succeeded", finished_at=now, activity=None, tokens_in=120,
                         tokens_out=80, cost=0.0021, summary=f"{task_id} done")  # fmt: skip

    def stall(self) -> None:
        self.plan_update("running")
        task = self.plan["tasks"][0]
        now = time.time()
        self.task_update(task, status="running", attempt=2, started_at=now - 400,
                         last_event_at=now - 320, stalled=True, activity="thinking")  # fmt: skip
        self.pause(EscalationInterrupt(
            id="int-" + self.run.id, title="Task a stalled", body="", task_id=task["id"],
            plan_id=self.plan["id"], reason="stalled", attempts=2, error="no event for 320 s",
            profiles=("writer", "coder"),
        ))  # fmt: skip
        self.run.finish(RunFinished(outcome="interrupted"), "interrupted")

    def escalate(self, task_id: str, value: dict[str, Any]) -> None:
        task = next(t for t in self.plan["tasks"] if t["id"] == task_id)
        action = value["action"]
        if action in ("retry", "reassign"):
            task["profile"] = value.get("profile") or task["profile"]
            self.run_task(task)
        elif action == "skip":
            self.task_update(task, status="skipped", stalled=False, finished_at=time.time())
        else:
            self.task_update(task, status="cancelled", stalled=False, finished_at=time.time())
            self.plan_update("aborted")
        self.run.echo(f"Escalation: {action}.")

    def two_questions(self) -> None:
        self.pause(QuestionInterrupt(
            id="int-q-" + self.run.id, title="Task a asks", body="", task_id="a",
            question="Which tense?", choices=("past", "present"),
        ))  # fmt: skip
        self.pause(ApprovalInterrupt(
            id="int-w-" + self.run.id, title="Task b writes", body="", task_id="b",
            server="workspace", tool="write", arguments={"path": "b.md"}, call_id="cb",
        ))  # fmt: skip
        self.run.finish(RunFinished(outcome="interrupted"), "interrupted")
