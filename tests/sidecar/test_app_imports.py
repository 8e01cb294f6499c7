"""What the sidecar loads before it can answer `initialize`: the start-up (`sidecar.startup`:
the wire protocol, the RPC server, the data folder's lock) and nothing a first turn needs;
the app (its composition root and every handler), imported on a worker thread after the
reply, still without LangGraph, DSPy or LiteLLM, which the warm-up loads in the background."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODEL_STACK = ("langgraph", "dspy", "litellm")
AFTER_THE_REPLY = (
    *MODEL_STACK,
    "mcp",
    "mcp_types",
    "mcp_servers.memory",
    "sidecar.app",
    "sidecar.store",
    "sidecar.handlers",
    "sidecar.host",
    "sidecar.runtime.runs",
    "sidecar.plans",
    "sidecar.graph",
)


def _loaded(statements: str, modules: tuple[str, ...]) -> dict[str, bool]:
    code = (
        "import json, sys\n"
        f"{statements}\n"
        f"print(json.dumps({{m: m in sys.modules for m in {modules!r}}}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)


def test_the_start_up_that_answers_initialize_loads_nothing_a_first_turn_needs() -> None:
    assert _loaded("import sidecar.startup", AFTER_THE_REPLY) == dict.fromkeys(
        AFTER_THE_REPLY, False
    )


def test_the_app_and_its_handlers_load_no_graph_or_model_library() -> None:
    statements = "import sidecar.app\nfrom sidecar.handlers.table import load_all\nload_all()"
    assert _loaded(statements, MODEL_STACK) == dict.fromkeys(MODEL_STACK, False)
