"""What the sidecar loads before it can answer `initialize` (cold start < 0.8 s): its
composition root and every handler, but not LangGraph, DSPy or LiteLLM, which the warm-up
loads in the background."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("langgraph", "dspy", "litellm")


def test_starting_the_sidecar_loads_no_graph_or_model_library() -> None:
    code = (
        "import json, sys\n"
        "import sidecar.app\n"
        "from sidecar.handlers.table import load_all\n"
        "load_all()\n"
        f"print(json.dumps({{m: m in sys.modules for m in {HEAVY!r}}}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(done.stdout) == dict.fromkeys(HEAVY, False)
