"""Trace files never hold the author's keys or credential-shaped strings."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_servers.agents.traces import TraceWriter
from mcp_servers.redaction import MASK

KEY = "sk-ant-api03-" + "Z9y8X7w6" * 4


def test_raw_stdin_and_stderr_traces_are_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "plain-value-123")
    writer = TraceWriter(tmp_path, "run1")
    writer.write_raw(f'{{"type":"text","text":"key {KEY} and plain-value-123"}}')
    writer.write_stdin(f"use {KEY}")
    writer.write_stderr(f"warning: token plain-value-123 {KEY}\n".encode())
    writer.close()
    for path in (writer.ref.raw_path, writer.ref.stdin_path, writer.ref.stderr_path):
        text = path.read_text(encoding="utf-8")
        assert KEY not in text and "plain-value-123" not in text, path
        assert MASK in text
