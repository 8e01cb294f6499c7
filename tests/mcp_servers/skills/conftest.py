"""Skill folders written the way Claude Code, Codex and Goose read them."""

from __future__ import annotations

from pathlib import Path

import pytest


def write_skill(
    root: Path,
    name: str,
    description: str = "Use when the author asks for a harbour report.",
    body: str = "# Steps\n1. Read the tide table.\n",
    *,
    folder: str | None = None,
    frontmatter: str | None = None,
) -> Path:
    path = root / (folder or name)
    path.mkdir(parents=True, exist_ok=True)
    head = frontmatter if frontmatter is not None else f"name: {name}\ndescription: {description}\n"
    (path / "SKILL.md").write_text(f"---\n{head}---\n{body}", encoding="utf-8")
    return path


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path
