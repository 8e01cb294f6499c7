"""Replay a recorded CLI transcript through a parser, without any subprocess.

    python -m mcp_servers.agents.replay <claude|codex|openclaw> <transcript.jsonl>

Prints every normalized event as a JSON line (terminal event included), then the
`OperatorResult` as the last JSON line.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO, cast, get_args

from mcp_servers.agents.events import dump_event
from mcp_servers.agents.parsers import replay_lines
from mcp_servers.agents.results import Provider


def replay_file(provider: Provider, path: Path, out: TextIO) -> int:
    """Write the events and result for the transcript at `path` to `out`; 0 on success."""
    with path.open(encoding="utf-8", errors="replace", newline="") as handle:
        events, result = replay_lines(provider, handle, run_id=path.stem)
    for event in events:
        out.write(dump_event(event) + "\n")
    out.write(result.model_dump_json() + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog="python -m mcp_servers.agents.replay")
    parser.add_argument("provider", choices=get_args(Provider))
    parser.add_argument("transcript", type=Path)
    args = parser.parse_args(argv)
    transcript = cast(Path, args.transcript)
    if not transcript.is_file():
        parser.error(f"no such transcript: {transcript}")
    return replay_file(cast(Provider, args.provider), transcript, sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
