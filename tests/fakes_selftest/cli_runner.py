"""Run an agent CLI to completion and split its JSONL stdout into events."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class CliRun:
    returncode: int
    events: list[dict[str, Any]]
    stderr: str

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("type") == kind]


def run_cli(argv: Sequence[str | Path], env: dict[str, str], cwd: Path) -> CliRun:
    """Run with stdin closed (Codex otherwise waits for stdin EOF) and a hard time limit."""
    done = subprocess.run(
        [str(a) for a in argv],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return CliRun(done.returncode, events, done.stderr)
