"""A strong agent's working copy gets exactly the skills its profile allows, in the folder its
CLI reads (Claude Code `.claude/skills`, Codex and OpenClaw `.agents/skills`), with their
scripts, references and assets; denied and broken skills are absent, links leading out are not
followed, and nothing placed comes back in the changeset (an edit of a workspace skill that was
already in place does)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sidecar.plans import agent_skills
from sidecar.plans.agent_skills import Placement, give_skills, load_placement
from sidecar.plans.profiles import Profile
from sidecar.plans.review.changeset import compute_changeset
from sidecar.plans.review.isolation import Isolation, create_isolation
from sidecar.plans.review.limits import Deadline
from tests.mcp_servers.skills.conftest import write_skill
from tests.sidecar.plans.review.conftest import git

CLAUDE = Profile(id="claude", name="Claude Code", kind="claude_code")
CODEX = Profile(id="codex", name="Codex", kind="codex")
OPENCLAW = Profile(id="openclaw", name="OpenClaw", kind="openclaw")


def files(folder: Path) -> dict[str, str]:
    if not folder.exists():
        return {}
    return {
        p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8", errors="replace")
        for p in sorted(folder.rglob("*"))
        if p.is_file() or p.is_symlink()
    }


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.md").write_text("# Notes\n")
    return ws


@pytest.fixture
def account(tmp_path: Path) -> Path:
    folder = tmp_path / "data" / "skills"
    folder.mkdir(parents=True)
    return folder


def given(
    workspace: Path, account: Path, tmp_path: Path, profile: Profile
) -> tuple[Isolation, Placement]:
    made = create_isolation(workspace, tmp_path / "iso", Deadline(30))
    placement = give_skills(made, profile, account, Deadline(30))
    assert placement is not None
    return made, placement


def test_claude_code_gets_workspace_and_account_skills_whole_in_its_skills_folder(
    workspace: Path, account: Path, tmp_path: Path
):
    tide = write_skill(workspace / ".agents" / "skills", "tide-tables")
    (tide / "scripts").mkdir()
    (tide / "scripts" / "fetch.py").write_text("print('tides')\n")
    (tide / "scripts" / "fetch.py").chmod(0o755)
    (tide / "references").mkdir()
    (tide / "references" / "ports.md").write_text("# Ports\n")
    (tide / "assets").mkdir()
    (tide / "assets" / "chart.txt").write_text("~~~\n")
    write_skill(account, "harbour-report")

    made, placement = given(workspace, account, tmp_path, CLAUDE)

    skills = made.folder / ".claude" / "skills"
    assert files(skills / "tide-tables") == files(tide)
    assert os.access(skills / "tide-tables" / "scripts" / "fetch.py", os.X_OK)
    assert files(skills / "harbour-report") == files(account / "harbour-report")
    assert placement.given == ("harbour-report", "tide-tables")
    assert placement.folder == ".claude/skills"
    assert (placement.left_out, placement.notes()) == ((), "")
    assert compute_changeset(made, Deadline(30)).files == ()


@pytest.mark.parametrize("profile", [CODEX, OPENCLAW], ids=["codex", "openclaw"])
def test_codex_and_openclaw_read_the_agents_folder(
    workspace: Path, account: Path, tmp_path: Path, profile: Profile
):
    write_skill(workspace / ".claude" / "skills", "tide-tables")
    write_skill(account, "harbour-report")

    made, placement = given(workspace, account, tmp_path, profile)

    assert sorted(os.listdir(made.folder / ".agents" / "skills")) == [
        "harbour-report",
        "tide-tables",
    ]
    assert placement.folder == ".agents/skills"
    assert compute_changeset(made, Deadline(30)).files == ()


def test_a_denied_skill_is_absent_from_the_copy_and_its_absence_is_no_deletion(
    workspace: Path, account: Path, tmp_path: Path
):
    write_skill(workspace / ".agents" / "skills", "secret-ops")
    write_skill(workspace / ".claude" / "skills", "secret-ops-two")
    write_skill(workspace / ".agents" / "skills", "tide-tables")
    write_skill(account, "secret-account")
    profile = Profile(id="c", name="Codex", kind="codex", skills_denied=("secret-*",))

    made, placement = given(workspace, account, tmp_path, profile)

    assert os.listdir(made.folder / ".agents" / "skills") == ["tide-tables"]
    assert os.listdir(made.folder / ".claude" / "skills") == []
    assert placement.given == ("tide-tables",)
    assert compute_changeset(made, Deadline(30)).files == ()
    assert (workspace / ".agents" / "skills" / "secret-ops" / "SKILL.md").exists()


def test_an_allow_list_of_50_among_200_skills_gives_exactly_those_50(
    workspace: Path, account: Path, tmp_path: Path
):
    names = [f"skill-{i:03d}" for i in range(200)]
    for i, name in enumerate(names):
        root = workspace / ".agents" / "skills" if i % 2 else account
        folder = write_skill(root, name)
        (folder / "references").mkdir()
        (folder / "references" / "guide.md").write_text(f"# {name}\n")
    allowed = names[::4]
    profile = Profile(id="c", name="Claude", kind="claude_code", skills_allowed=tuple(allowed))

    made, placement = given(workspace, account, tmp_path, profile)

    assert len(allowed) == 50
    assert sorted(os.listdir(made.folder / ".claude" / "skills")) == allowed
    assert sorted(os.listdir(made.folder / ".agents" / "skills")) == [
        n for n in allowed if int(n[-3:]) % 2
    ]
    assert placement.given == tuple(allowed)
    assert all(
        (made.folder / ".claude" / "skills" / n / "references" / "guide.md").is_file()
        for n in allowed
    )
    assert compute_changeset(made, Deadline(30)).files == ()


def test_a_broken_skill_is_not_copied_and_the_notes_say_why(
    workspace: Path, account: Path, tmp_path: Path
):
    broken = workspace / ".agents" / "skills" / "broken-one"
    broken.mkdir(parents=True)
    (broken / "SKILL.md").write_text("no frontmatter here\n")
    write_skill(account, "tide-tables")
    (account / "not-utf8").mkdir()
    (account / "not-utf8" / "SKILL.md").write_bytes(b"---\nname: not-utf8\n\xff\xfe\n---\n")

    made, placement = given(workspace, account, tmp_path, CLAUDE)

    assert os.listdir(made.folder / ".claude" / "skills") == ["tide-tables"]
    assert not (made.folder / ".agents" / "skills" / "broken-one").exists()
    assert [name for name, _ in placement.left_out] == ["broken-one", "not-utf8"]
    assert "no frontmatter" in dict(placement.left_out)["broken-one"]
    assert placement.notes().startswith("Skills not given to the agent: broken-one (")
    assert "left out" in placement.activity()
    assert compute_changeset(made, Deadline(30)).files == ()


def test_the_first_skill_of_a_name_wins_as_in_the_catalog(
    workspace: Path, account: Path, tmp_path: Path
):
    write_skill(workspace / ".agents" / "skills", "tide-tables", "From .agents.")
    write_skill(workspace / ".claude" / "skills", "tide-tables", "From .claude.")
    write_skill(account, "tide-tables", "From the account.")

    made, placement = given(workspace, account, tmp_path, CLAUDE)

    text = (made.folder / ".claude" / "skills" / "tide-tables" / "SKILL.md").read_text()
    assert "From .agents." in text
    assert placement.given == ("tide-tables",)
    assert placement.left_out == ()
    assert compute_changeset(made, Deadline(30)).files == ()


def test_links_leading_out_of_a_skill_are_not_followed(
    workspace: Path, account: Path, tmp_path: Path
):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("not for the agent\n")
    folder = write_skill(account, "tide-tables")
    (folder / "scripts").mkdir()
    (folder / "scripts" / "run.sh").write_text("echo run\n")
    (folder / "scripts" / "alias.sh").symlink_to("run.sh")
    (folder / "scripts" / "leak.txt").symlink_to(outside / "secret.txt")
    (folder / "assets").symlink_to(outside)
    write_skill(outside, "elsewhere")
    (account / "elsewhere").symlink_to(outside / "elsewhere")

    made, placement = given(workspace, account, tmp_path, CLAUDE)

    placed = made.folder / ".claude" / "skills" / "tide-tables"
    assert files(placed) == {
        "SKILL.md": (folder / "SKILL.md").read_text(),
        "scripts/alias.sh": "echo run\n",
        "scripts/run.sh": "echo run\n",
    }
    assert not (placed / "scripts" / "alias.sh").is_symlink()
    assert placement.links_skipped == ("tide-tables/assets", "tide-tables/scripts/leak.txt")
    assert [name for name, _ in placement.left_out] == ["elsewhere"]
    assert not (made.folder / ".claude" / "skills" / "elsewhere").exists()
    assert "Links in skills not followed: tide-tables/assets" in placement.notes()


def test_an_edit_of_a_workspace_skill_already_in_place_is_reviewed_but_placed_ones_are_not(
    workspace: Path, account: Path, tmp_path: Path
):
    write_skill(workspace / ".agents" / "skills", "harbour-report")
    write_skill(account, "tide-tables")
    made, _ = given(workspace, account, tmp_path, CODEX)
    skills = made.folder / ".agents" / "skills"

    (skills / "harbour-report" / "SKILL.md").write_text("---\nname: harbour-report\n---\nnew\n")
    (skills / "harbour-report" / "scripts").mkdir()
    (skills / "harbour-report" / "scripts" / "go.sh").write_text("go\n")
    (skills / "tide-tables" / "SKILL.md").write_text("edited by the agent\n")
    (skills / "tide-tables" / "extra.md").write_text("added by the agent\n")

    changes = compute_changeset(made, Deadline(30))
    assert [(f.path, f.status) for f in changes.files] == [
        (".agents/skills/harbour-report/SKILL.md", "changed"),
        (".agents/skills/harbour-report/scripts/go.sh", "added"),
    ]


def test_a_copy_given_its_skills_before_is_left_as_it_is(
    workspace: Path, account: Path, tmp_path: Path
):
    write_skill(account, "tide-tables")
    made, first = given(workspace, account, tmp_path, CLAUDE)
    placed = made.folder / ".claude" / "skills" / "tide-tables" / "SKILL.md"
    placed.write_text("the agent's own notes\n")
    write_skill(account, "harbour-report")

    again = give_skills(made, CLAUDE, account, Deadline(30))

    assert again == first == load_placement(made)
    assert placed.read_text() == "the agent's own notes\n"
    assert not (made.folder / ".claude" / "skills" / "harbour-report").exists()


def test_an_internal_profile_reads_no_skills_folder(workspace: Path, account: Path, tmp_path: Path):
    write_skill(account, "tide-tables")
    made = create_isolation(workspace, tmp_path / "iso", Deadline(30))
    internal = Profile(id="general", name="General", kind="internal")
    assert give_skills(made, internal, account, Deadline(30)) is None
    assert not (made.folder / ".claude").exists()


def test_in_a_worktree_denied_tracked_skills_are_absent_and_placed_untracked_ones_unlisted(
    workspace: Path, account: Path, tmp_path: Path
):
    write_skill(workspace / ".agents" / "skills", "secret-ops")
    write_skill(workspace / ".agents" / "skills", "tide-tables")
    git(workspace, "init", "-q", "-b", "main")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-q", "-m", "skills")
    write_skill(account, "harbour-report")
    profile = Profile(id="c", name="Claude", kind="claude_code", skills_denied=("secret-ops",))

    made, placement = given(workspace, account, tmp_path, profile)

    assert made.kind == "worktree"
    assert sorted(os.listdir(made.folder / ".claude" / "skills")) == [
        "harbour-report",
        "tide-tables",
    ]
    assert os.listdir(made.folder / ".agents" / "skills") == ["tide-tables"]
    assert placement.given == ("harbour-report", "tide-tables")
    assert compute_changeset(made, Deadline(30)).files == ()


def test_a_skill_past_the_size_limit_is_left_out_whole(
    workspace: Path, account: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(agent_skills, "MAX_SKILL_FILES", 3)
    big = write_skill(account, "big-one")
    (big / "assets").mkdir()
    for i in range(5):
        (big / "assets" / f"{i}.txt").write_text("x\n")
    write_skill(account, "tide-tables")

    made, placement = given(workspace, account, tmp_path, CLAUDE)

    assert os.listdir(made.folder / ".claude" / "skills") == ["tide-tables"]
    assert placement.left_out == (("big-one", "more than 3 files"),)
    assert compute_changeset(made, Deadline(30)).files == ()
