"""Skills reach a strong agent through the real sidecar: the stand-in Codex
(tests/fakes/standin_codex.py) logs what its `.agents/skills` folder holds when it starts. The
copy holds the workspace's and the account's skills its profile allows, with their scripts,
references and assets, and not the denied or broken ones; the placed files never come back in
the changeset, while an edit of a workspace skill that was already there does."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from sidecar.plans.profiles import DEFAULT_PROFILES
from sidecar.protocol import InterruptInfo
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
    agent = await Sidecar.start(
        sidecar_data, workspace, initialize=True, **_standin(tmp_path, writes)
    )
    try:
        thread = await agent.call("thread/create", {})
        text = "/delegate codex Improve the harbour report"
        run = await agent.call("run/start", {"thread_id": thread["id"], "text": text})
        await _answer(agent, thread["id"], "approval", {"decision": "allow_once"})
        await agent.wait_for(lambda _evs: bool(_asked(agent, "changeset")), within=180)
        review = _asked(agent, "changeset")[0]
        statuses = {f.path: f.status for f in review.files}  # type: ignore[union-attr]
        await _answer(agent, thread["id"], "changeset", {"accepted": list(statuses)})
        await agent.run_to_end(run["run_id"], within=180)
        plans = (await agent.call("plan/get", {"thread_id": thread["id"]}))["plans"]
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
