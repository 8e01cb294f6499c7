"""Per-run trace files: raw stdout, normalized events, stdin writes, stderr, final result.

Files are named by run id in one directory:
`<run_id>.raw.jsonl` (stdout lines verbatim, non-JSON lines included, so it can be replayed),
`<run_id>.events.jsonl` (one normalized event per line), `<run_id>.stdin.jsonl` (what the host
wrote to the CLI), `<run_id>.stderr.log`, and `<run_id>.result.json`. Every write is flushed so
a crash leaves a usable trace.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import IO

import platformdirs

from mcp_servers.agents.events import AgentEvent, dump_event
from mcp_servers.agents.results import OperatorResult, TraceRef
from mcp_servers.redaction import redact, secret_environment

logger = logging.getLogger(__name__)


def default_trace_dir() -> Path:
    """`$ATRIUM_DATA_DIR/traces`, else the platform's user data dir for Atrium + `/traces`."""
    configured = os.environ.get("ATRIUM_DATA_DIR")
    base = Path(configured) if configured else Path(platformdirs.user_data_dir("atrium", False))
    return base / "traces"


def trace_ref(directory: Path, run_id: str) -> TraceRef:
    """The paths of a run's trace files (whether or not they exist yet)."""
    return TraceRef(
        run_id=run_id,
        raw_path=directory / f"{run_id}.raw.jsonl",
        normalized_path=directory / f"{run_id}.events.jsonl",
        stdin_path=directory / f"{run_id}.stdin.jsonl",
        stderr_path=directory / f"{run_id}.stderr.log",
        result_path=directory / f"{run_id}.result.json",
    )


class TraceWriter:
    """Appends to one run's trace files; all attempts of a run share them.

    A failing write (disk full, directory removed) is logged once and otherwise ignored: losing
    a trace must not break the run it records.
    """

    def __init__(self, directory: Path, run_id: str) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.ref = trace_ref(directory, run_id)
        self._raw = self.ref.raw_path.open("a", encoding="utf-8", newline="")
        self._events = self.ref.normalized_path.open("a", encoding="utf-8")
        self._stdin = self.ref.stdin_path.open("a", encoding="utf-8")
        self._stderr = self.ref.stderr_path.open("ab")
        self._broken = False
        # Secrets never reach a trace file: the author's keys in this environment, and
        # anything shaped like a credential (mcp_servers.redaction).
        self._secrets = secret_environment()

    def write_raw(self, line: str) -> None:
        """One stdout line, verbatim but for secrets."""
        self._append(self._raw, line + "\n")

    def write_event(self, event: AgentEvent) -> None:
        """One normalized event."""
        self._append(self._events, dump_event(event) + "\n")

    def write_stdin(self, line: str) -> None:
        """One line the host wrote to the CLI's stdin."""
        self._append(self._stdin, line + "\n")

    def write_stderr(self, chunk: bytes) -> None:
        """A chunk of the CLI's stderr."""
        try:
            text = chunk.decode("utf-8", "surrogateescape")
            chunk = redact(text, self._secrets).encode("utf-8", "surrogateescape")
            self._stderr.write(chunk)
            self._stderr.flush()
        except OSError as exc:
            self._report(exc)

    def write_result(self, result: OperatorResult) -> None:
        """The run's final result, as one JSON document."""
        try:
            text = redact(result.model_dump_json(indent=2), self._secrets) + "\n"
            self.ref.result_path.write_text(text, encoding="utf-8")
        except OSError as exc:
            self._report(exc)

    def close(self) -> None:
        """Close every file (idempotent)."""
        for handle in (self._raw, self._events, self._stdin, self._stderr):
            try:
                handle.close()
            except OSError as exc:
                self._report(exc)

    def _append(self, handle: IO[str], text: str) -> None:
        try:
            handle.write(redact(text, self._secrets))
            handle.flush()
        except OSError as exc:
            self._report(exc)

    def _report(self, exc: OSError) -> None:
        if not self._broken:
            self._broken = True
            logger.warning("trace of run %s is incomplete: %s", self.ref.run_id, exc)
