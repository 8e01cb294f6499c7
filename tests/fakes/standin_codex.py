"""A stand-in `codex` that writes files into the folder it is given (stdlib only).

Speaks `codex exec --json` on stdout (thread.started, turn.started, a file_change item, an
agent_message, turn.completed) and really writes into its `-C` folder, so tests can tell where
a strong agent's writes land. Behaviour comes from the environment:

STANDIN_WRITES  JSON object {relative path: text, or null to delete} applied in the -C folder
STANDIN_LOG     JSONL file: one {"cwd": <-C folder>, "argv": [...]} line per run
STANDIN_ALSO    JSON object {absolute path: text} written as well (an author's edit meanwhile)
STANDIN_HANG    after writing and announcing the file change, wait until stopped (SIGINT: 130)
STANDIN_SEES    a folder relative to -C: its files at start are logged (`sees`), before any write
STANDIN_FAIL    the turn fails with this message (codex's own `turn.failed`), exit code 1
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from pathlib import Path


def main(argv: list[str]) -> int:
    if argv == ["--version"]:  # what the agents server asks to tell what is installed
        print("codex-cli 0.0.0-standin")
        return 0
    folder = Path(argv[argv.index("-C") + 1]) if "-C" in argv else Path.cwd()
    log = os.environ.get("STANDIN_LOG")
    if log:
        record: dict[str, object] = {"cwd": str(folder), "argv": argv}
        seen = os.environ.get("STANDIN_SEES")
        if seen:
            base = folder / seen
            record["sees"] = sorted(
                p.relative_to(base).as_posix() for p in base.rglob("*") if p.is_file()
            )
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
    writes: dict[str, str | None] = json.loads(os.environ.get("STANDIN_WRITES", "{}"))
    changes: list[dict[str, str]] = []
    for rel, text in writes.items():
        target = folder / rel
        if text is None:
            target.unlink(missing_ok=True)
            changes.append({"path": str(target), "kind": "delete"})
            continue
        kind = "update" if target.exists() else "add"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        changes.append({"path": str(target), "kind": kind})
    for path, text in json.loads(os.environ.get("STANDIN_ALSO", "{}")).items():
        Path(path).write_text(text, encoding="utf-8")
    lines = [
        {"type": "thread.started", "thread_id": "0190-standin-thread"},
        {"type": "turn.started"},
        {
            "type": "item.completed",
            "item": {
                "id": "item_0",
                "type": "file_change",
                "changes": changes,
                "status": "completed",
            },
        },
        {
            "type": "item.completed",
            "item": {
                "id": "item_1",
                "type": "agent_message",
                "text": f"Wrote {len(changes)} files.",
            },
        },
        {
            "type": "turn.completed",
            "usage": {"input_tokens": 12, "cached_input_tokens": 0, "output_tokens": 5},
        },
    ]
    failure = os.environ.get("STANDIN_FAIL")
    if failure:
        for line in [*lines[:2], {"type": "turn.failed", "error": {"message": failure}}]:
            sys.stdout.write(json.dumps(line) + "\n")
        sys.stdout.flush()
        return 1
    if os.environ.get("STANDIN_HANG"):
        signal.signal(signal.SIGINT, lambda _sig, _frame: os._exit(130))
        for line in lines[:3]:
            sys.stdout.write(json.dumps(line) + "\n")
            sys.stdout.flush()
        threading.Event().wait()
    for line in lines:
        sys.stdout.write(json.dumps(line) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
