"""Skills reach a strong agent through the real sidecar: the stand-in Codex
(tests/fakes/standin_codex.py) logs what its `.agents/skills` folder holds when it starts. The
copy holds the workspace's and the account's skills its profile allows, with their scripts,
references and assets, and not the denied or broken ones; the placed files never come back in
the changeset, while an edit of a workspace skill that was already there does. The task runs in
the background of its thread; its report (with the skills left out) comes back as the
announcement a turn takes by itself."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from sidecar.plans.profiles import DEFAULT_PROFILES
from sidecar.protocol import InterruptInfo, RunEventParams
from tests.e2e.harness import Sidecar

pytestmark = pytest.mark.anyio
STANDIN = Path(__file__).parents[1] / "fakes" / "standin_codex.py"


def _skill(root: Path, name: str, body: str = "Steps.\n") -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    text = f"---\nname: {name}\ndescription: Use for {name}.\n---\n{body}"
    (folder / "SKILL.md").write_text(text, encoding="utf-8")
    return folder


def _profiles(data: Path) -> None:
    profiles = [
        p.model_copy(update={"skills_denied": ("secret-*",)}) if p.id == "codex" else p
        for p in DEFAULT_PROFILES
    ]
    body = {"profiles": [p.model_dump(mode="json") for p in profiles]}
    (data / "profiles.json").write_text(json.dumps(body), encoding="utf-8")


def _standin(tmp_path: Path, writes: dict[str, str]) -> dict[str, str]:
    script = tmp_path / "codex"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{STANDIN}" "$@"\n')
    script.chmod(0o755)
    return {
        "ATRIUM_CODEX_BIN": str(script),
        "STANDIN_WRITES": json.dumps(writes),
        "STANDIN_LOG": str(tmp_path / "standin.log"),
        "STANDIN_SEES": ".agents/skills",
    }


def _asked(agent: Sidecar, kind: str) -> list[InterruptInfo]:
    return [
        e.event.interrupt  # type: ignore[union-attr]
        for e in agent.events
        if e.event.type == "interrupt" and e.event.interrupt.kind == kind  # type: ignore[union-attr]
    ]


async def _answer(agent: Sidecar, thread_id: str, kind: str, value: dict[str, Any]) -> None:
    await agent.wait_for(lambda _evs: bool(_asked(agent, kind)), within=180)
    asked = _asked(agent, kind)[0]
    await agent.call(
        "run/resume", {"thread_id": thread_id, "interrupt_id": asked.id, "value": value}
    )


async def _announcement(agent: Sidecar, thread_id: str, plan_run: str) -> str:
    """The plan's report, announced into the thread once its background run ended and taken
    by a turn nobody started (it ends before this returns)."""
    since = next(i for i, e in enumerate(agent.events) if e.run_id == plan_run)

    def turns() -> list[str]:
        return [
            e.run_id
            for e in agent.events[since:]
            if e.thread_id == thread_id and not e.background and e.event.type == "run_started"
        ]

    def ended(events: list[RunEventParams]) -> bool:
        return any(e.run_id in turns() and e.event.type == "run_finished" for e in events)

    await agent.wait_for(ended, within=180)
    assert len(turns()) == 1
    messages = (await agent.call("thread/get", {"thread_id": thread_id}))["messages"]
    [announced] = [m for m in messages if str(m["content"] or "").startswith("[Background plan")]
    assert announced["role"] == "user"
    return str(announced["content"])


async def test_the_copy_holds_the_allowed_skills_before_the_agent_starts_and_none_come_back(
    sidecar_data: Path, workspace: Path, tmp_path: Path
):
    skills = workspace / ".agents" / "skills"
    _skill(skills, "harbour-report")
    _skill(skills, "secret-ops")
    (skills / "broken-one").mkdir()
    (skills / "broken-one" / "SKILL.md").write_text("no frontmatter\n", encoding="utf-8")
    tide = _skill(sidecar_data / "skills", "tide-tables")
    for rel, text in {
        "scripts/fetch.py": "print('tides')\n",
        "references/ports.md": "# Ports\n",
        "assets/chart.txt": "~~~\n",
    }.items():
        (tide / rel).parent.mkdir(exist_ok=True)
        (tide / rel).write_text(text, encoding="utf-8")
    _profiles(sidecar_data)
    writes = {
        ".agents/skills/harbour-report/SKILL.md": "---\nname: harbour-report\n---\nBetter.\n",
        ".agents/skills/tide-tables/SKILL.md": "rewritten copy\n",
        "new.txt": "from the agent\n",
    }
    agent = await Sidecar.start(sidecar_data, workspace, **_standin(tmp_path, writes))
    try:
        thread = await agent.call("thread/create", {})
        text = "/delegate codex Improve the harbour report"
        run = await agent.call("run/start", {"thread_id": thread["id"], "text": text})
        # The turn hands the task to the background and ends by itself.
        turn = await agent.run_to_end(run["run_id"], within=180)
        assert turn[-1].event.type == "run_finished"
        await _answer(agent, thread["id"], "approval", {"decision": "allow_once"})
        await agent.wait_for(lambda _evs: bool(_asked(agent, "changeset")), within=180)
        review = _asked(agent, "changeset")[0]
        assert review.run_id == agent.background_runs(thread["id"])[0]
        statuses = {f.path: f.status for f in review.files}  # type: ignore[union-attr]
        await _answer(agent, thread["id"], "changeset", {"accepted": list(statuses)})
        plan_run = await agent.plan_to_end(thread["id"], within=180)
        assert plan_run[-1].event.type == "run_finished"
        plans = (await agent.call("plan/get", {"thread_id": thread["id"]}))["plans"]
        announcement = await _announcement(agent, thread["id"], plan_run[0].run_id)
    finally:
        await agent.kill()
    [started] = [json.loads(line) for line in (tmp_path / "standin.log").read_text().splitlines()]
    assert started["sees"] == [
        "harbour-report/SKILL.md",
        "tide-tables/SKILL.md",
        "tide-tables/assets/chart.txt",
        "tide-tables/references/ports.md",
        "tide-tables/scripts/fetch.py",
    ]
    assert statuses == {".agents/skills/harbour-report/SKILL.md": "changed", "new.txt": "added"}
    assert (skills / "harbour-report" / "SKILL.md").read_text().endswith("Better.\n")
    assert not (skills / "tide-tables").exists()  # the account's skill stayed the account's
    assert (skills / "secret-ops" / "SKILL.md").exists()
    [task] = plans[-1]["tasks"]
    assert "Skills not given to the agent: broken-one (no frontmatter" in task["summary"]
    assert announcement.startswith(f"[Background plan {plans[-1]['id']} ended: completed]\n")
    assert "Skills not given to the agent: broken-one (no frontmatter" in announcement
