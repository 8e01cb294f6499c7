"""Identity files: read every turn, pinned, truncated with a marker, bad files skipped with a
warning (never a crash)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sidecar.context.identity import MAX_READ_BYTES, read_head, read_identity
from sidecar.context.tokens import ESTIMATE


def _write(root: Path, relative: str, data: bytes) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def test_the_three_files_are_read_byte_exact_in_order(tmp_path: Path) -> None:
    _write(tmp_path, ".atrium/SOUL.md", b"Warm, brief.\n")
    _write(tmp_path, ".atrium/AGENT.md", b"Call the river the Wend.  \n\n")
    _write(tmp_path, ".atrium/USER.md", b"I am Ada, I write novels.\r\n")
    identity = read_identity(tmp_path, 1000, ESTIMATE.count)
    assert [(f.path, f.text) for f in identity.files] == [
        (".atrium/AGENT.md", "Call the river the Wend.  \n\n"),
        (".atrium/USER.md", "I am Ada, I write novels.\r\n"),
        (".atrium/SOUL.md", "Warm, brief.\n"),
    ]
    assert identity.warnings == ()


def test_agents_md_at_the_root_stands_in_for_a_missing_agent_md(tmp_path: Path) -> None:
    _write(tmp_path, "AGENTS.md", b"Root rules.\n")
    assert [f.path for f in read_identity(tmp_path, 100, ESTIMATE.count).files] == ["AGENTS.md"]
    _write(tmp_path, ".atrium/AGENT.md", b"Atrium rules.\n")
    assert [f.path for f in read_identity(tmp_path, 100, ESTIMATE.count).files] == [
        ".atrium/AGENT.md"
    ]


def test_a_file_over_its_budget_is_truncated_with_a_visible_marker_and_a_warning(
    tmp_path: Path,
) -> None:
    _write(tmp_path, ".atrium/USER.md", ("word " * 5000).encode())
    identity = read_identity(tmp_path, 200, ESTIMATE.count)
    (file,) = identity.files
    assert file.truncated and file.full_tokens > 200 and file.tokens <= 200
    assert "[… .atrium/USER.md truncated" in file.text
    assert len(identity.warnings) == 1 and "over its budget" in identity.warnings[0]


def test_a_file_that_is_not_utf8_is_skipped_with_a_warning(tmp_path: Path) -> None:
    _write(tmp_path, ".atrium/AGENT.md", b"\xff\xfe\x00bad latin-1: \xe9t\xe9")
    identity = read_identity(tmp_path, 100, ESTIMATE.count)
    assert identity.files == () and "not UTF-8" in identity.warnings[0]


def test_a_huge_file_is_read_only_to_its_start_and_cut_to_its_budget(tmp_path: Path) -> None:
    _write(tmp_path, ".atrium/SOUL.md", ("é" * 700_000).encode())  # 1.4 MB of 2-byte characters
    identity = read_identity(tmp_path, 500, ESTIMATE.count)
    (file,) = identity.files
    assert file.truncated and file.tokens <= 500
    assert any("only its start is read" in w for w in identity.warnings)


def test_a_character_split_by_the_read_bound_is_left_out_and_invalid_bytes_still_refused(
    tmp_path: Path,
) -> None:
    path = tmp_path / "USER.md"
    path.write_bytes(b"a" + "𝄞".encode() * (MAX_READ_BYTES // 4 + 10))  # the bound splits one
    assert read_head(path, MAX_READ_BYTES) == ("a" + "𝄞" * (MAX_READ_BYTES // 4 - 1), True)
    path.write_bytes(b"a" * (MAX_READ_BYTES - 1) + b"\xff" + b"a" * 10)
    with pytest.raises(UnicodeDecodeError):
        read_head(path, MAX_READ_BYTES)
    path.write_bytes("\ufeffsmall é".encode())
    assert read_head(path, MAX_READ_BYTES) == ("small é", False)


def test_a_symlink_leading_outside_the_workspace_is_skipped_with_a_warning(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / ".atrium").mkdir(parents=True)
    secret = tmp_path / "secret.md"
    secret.write_text("private notes")
    os.symlink(secret, root / ".atrium" / "USER.md")
    os.symlink(root / ".atrium" / "missing.md", root / ".atrium" / "SOUL.md")
    identity = read_identity(root, 100, ESTIMATE.count)
    assert identity.files == ()
    assert any("outside the workspace" in w for w in identity.warnings)
    assert any("broken" in w for w in identity.warnings)


def test_a_directory_where_a_file_should_be_is_skipped(tmp_path: Path) -> None:
    (tmp_path / ".atrium" / "AGENT.md").mkdir(parents=True)
    identity = read_identity(tmp_path, 100, ESTIMATE.count)
    assert identity.files == () and "not a regular file" in identity.warnings[0]


def test_a_missing_workspace_has_no_identity(tmp_path: Path) -> None:
    identity = read_identity(tmp_path / "gone", 100, ESTIMATE.count)
    assert identity.files == () and identity.warnings == ()
