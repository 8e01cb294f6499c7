"""The Skill Composer's draft in isolation: the job in a task's objective, the files in the
composer's answer, the catalog's rules on the staged draft, and the review gate's changeset and
apply on the staging folder (only accepted files land; nothing lands on rejection)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_servers.skills.catalog import SkillRoot, default_roots, scan
from sidecar.plans.review.apply import apply_changes
from sidecar.plans.review.changeset import compute_changeset
from sidecar.plans.review.limits import Deadline
from sidecar.plans.skill_draft import (
    MAX_MATERIAL_CHARS,
    DraftError,
    Job,
    check_name,
    check_staged,
    composer_objective,
    newest,
    parse_job,
    split_draft,
    stage_draft,
    target_root,
)

GOOD = (
    "---\nname: harbour-report\ndescription: Use to write a harbour report from the tides.\n"
    "---\n# Steps\n1. Read the tide table.\n2. Write the report.\n"
)


def _stage(tmp_path: Path, answer: str, job: Job | None = None):
    job = job or Job("harbour-report", "workspace")
    root = tmp_path / "ws" / ".agents" / "skills"
    isolation = stage_draft(root, tmp_path / "staging", job, split_draft(answer), Deadline(30))
    return job, root, isolation


def test_the_job_written_into_an_objective_reads_back() -> None:
    for job in (Job("harbour-report", "workspace"), Job("tide-table", "account")):
        objective = composer_objective(job, "Conversation:\nuser: tides please")
        assert parse_job(objective) == job
        assert "tides please" in objective and f"name: {job.name}" in objective


def test_an_objective_without_a_composer_header_or_with_a_bad_name_is_refused() -> None:
    with pytest.raises(DraftError, match="does not name a skill"):
        parse_job("Write a report.")
    with pytest.raises(DraftError, match="not a skill name"):
        parse_job("Compose the skill 'Bad_Name' for the workspace (.agents/skills)")


@pytest.mark.parametrize("name", ["", "Upper", "two--hyphens", "-lead", "trail-", "a" * 65, "a/b"])
def test_names_the_catalog_refuses_are_refused_before_any_work(name: str) -> None:
    with pytest.raises(DraftError):
        check_name(name)


def test_the_targets_are_the_roots_the_catalog_scans(tmp_path: Path) -> None:
    roots = {r.path for r in default_roots(tmp_path / "ws", tmp_path / "data" / "skills")}
    assert target_root("workspace", tmp_path / "ws", tmp_path / "data") in roots
    assert target_root("account", tmp_path / "ws", tmp_path / "data") in roots


def test_an_answer_splits_into_skill_md_and_script_blocks() -> None:
    answer = GOOD + "\n```file scripts/tally.sh\n#!/bin/sh\necho 3\n```\n"
    assert split_draft(answer) == {"SKILL.md": GOOD, "scripts/tally.sh": "#!/bin/sh\necho 3\n"}


def test_an_answer_wrapped_in_a_markdown_fence_is_unwrapped() -> None:
    assert split_draft(f"```markdown\n{GOOD}```\n") == {"SKILL.md": GOOD}


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("", "no SKILL.md"),
        ("```file scripts/x.sh\necho\n```", "no SKILL.md"),
        (GOOD + "```file ../evil.sh\necho\n```", "inside the skill's folder"),
        (GOOD + "```file /etc/passwd\necho\n```", "inside the skill's folder"),
        (GOOD + "```file notes/x.md\ntext\n```", "extra files go in"),
        (GOOD + "".join(f"```file scripts/{n}.sh\necho\n```\n" for n in range(20)), "files"),
    ],
)
def test_an_answer_that_cannot_be_a_skill_folder_says_why(answer: str, why: str) -> None:
    with pytest.raises(DraftError, match=why):
        split_draft(answer)


def test_a_good_draft_passes_the_catalog_rules_and_is_only_staged(tmp_path: Path) -> None:
    job, root, isolation = _stage(tmp_path, GOOD)
    assert check_staged(isolation, job) == ()
    assert not root.exists()  # nothing reaches the skills folder before the review
    changes = compute_changeset(isolation, Deadline(30))
    assert [(f.path, f.status) for f in changes.files] == [("harbour-report/SKILL.md", "added")]
    assert "+name: harbour-report" in changes.files[0].diff


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        ("# Steps\nno frontmatter\n", "no frontmatter"),
        ("---\nname: harbour-report\n---\nbody\n", "no description"),
        ("---\nname: other-name\ndescription: d\n---\nbody\n", "differs from its folder"),
        ("---\nname: harbour-report\ndescription: [unclosed\n---\nbody\n", "not valid YAML"),
        (f"---\nname: harbour-report\ndescription: {'d' * 1025}\n---\nb\n", "1025 characters"),
    ],
)
def test_a_draft_the_catalog_would_list_with_errors_fails_the_check(
    tmp_path: Path, answer: str, error: str
) -> None:
    job, _root, isolation = _stage(tmp_path, answer)
    errors = check_staged(isolation, job)
    assert any(error in e for e in errors), errors


def test_accepting_lands_exactly_the_accepted_files_and_the_catalog_lists_the_skill(
    tmp_path: Path,
) -> None:
    answer = GOOD + "```file scripts/tally.sh\n#!/bin/sh\necho 3\n```\n"
    job, root, isolation = _stage(tmp_path, answer)
    report = apply_changes(isolation, ["harbour-report/SKILL.md"], Deadline(30))
    assert report.applied == ("harbour-report/SKILL.md",)
    assert (root / job.name / "SKILL.md").read_text() == GOOD
    assert not (root / job.name / "scripts").exists()
    [skill] = scan([SkillRoot(root, "workspace:.agents")])
    assert (skill.name, skill.ok) == ("harbour-report", True)


def test_rejecting_everything_leaves_no_skill_folder(tmp_path: Path) -> None:
    _job, root, isolation = _stage(tmp_path, GOOD)
    assert apply_changes(isolation, [], Deadline(30)).applied == ()
    assert not root.exists()


def test_a_redraft_of_an_existing_skill_is_a_change_against_what_is_saved(
    tmp_path: Path,
) -> None:
    job, root, first = _stage(tmp_path, GOOD)
    apply_changes(first, ["harbour-report/SKILL.md"], Deadline(30))
    edited = GOOD.replace("2. Write the report.", "2. Write the report.\n3. Send it.")
    _job, _root, second = _stage(tmp_path, edited, job)
    [change] = compute_changeset(second, Deadline(30)).files
    assert (change.path, change.status) == ("harbour-report/SKILL.md", "changed")
    assert "+3. Send it." in change.diff
    (root / job.name / "SKILL.md").write_text(GOOD + "author's own line\n")
    report = apply_changes(second, ["harbour-report/SKILL.md"], Deadline(30))
    assert report.conflicts == ("harbour-report/SKILL.md",)  # the author's edit is kept
    assert "author's own line" in (root / job.name / "SKILL.md").read_text()


def test_long_material_keeps_its_newest_part() -> None:
    text = "old " * 10_000 + "the newest line"
    cut = newest(text)
    assert len(cut) < MAX_MATERIAL_CHARS + 100 and cut.endswith("the newest line")
    assert newest("short") == "short"


def test_an_oversized_body_is_sent_back_with_the_catalogs_limit(tmp_path: Path) -> None:
    job, _root, isolation = _stage(tmp_path, GOOD + "x" * 300_000)
    [error] = check_staged(isolation, job)
    assert error.startswith("body is") and "at most" in error


def test_a_draft_with_the_most_files_stages_and_shows_every_one(tmp_path: Path) -> None:
    scripts = "".join(f"```file scripts/step{n:02}.sh\necho {n}\n```\n" for n in range(19))
    job, _root, isolation = _stage(tmp_path, GOOD + scripts)
    assert check_staged(isolation, job) == ()
    changes = compute_changeset(isolation, Deadline(30))
    assert len(changes.files) == 20 and all(f.status == "added" for f in changes.files)
    assert (isolation.folder / job.name / "scripts" / "step00.sh").stat().st_mode & 0o100
