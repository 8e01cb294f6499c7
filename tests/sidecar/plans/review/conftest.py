"""Real folders and a real git repository for the review gate's tests."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Author",
    "GIT_AUTHOR_EMAIL": "author@example.com",
    "GIT_COMMITTER_NAME": "Author",
    "GIT_COMMITTER_EMAIL": "author@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(cwd), *args],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **GIT_ENV},
    )
    return done.stdout


@pytest.fixture
def plain_workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "plain"
    (ws / "docs").mkdir(parents=True)
    (ws / "notes.txt").write_text("one\ntwo\n")
    (ws / "docs" / "guide.md").write_text("# Guide\n")
    (ws / "logo.bin").write_bytes(b"\x89PNG\0\0data")
    return ws


@pytest.fixture
def git_workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "repo"
    ws.mkdir()
    git(ws, "init", "-q", "-b", "main")
    (ws / ".gitignore").write_text("build/\n")
    (ws / "notes.txt").write_text("one\ntwo\n")
    (ws / "src").mkdir()
    (ws / "src" / "app.py").write_text("print('hi')\n")
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "first")
    return ws
