"""Importing the LLM layer must not import DSPy or LiteLLM (sidecar cold start < 0.8 s)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_importing_the_llm_layer_loads_neither_dspy_nor_litellm() -> None:
    code = (
        "import json, sys\n"
        "import sidecar.llm, sidecar.llm.planner, sidecar.llm.config\n"
        "print(json.dumps({m: m in sys.modules for m in ('dspy', 'litellm')}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(done.stdout) == {"dspy": False, "litellm": False}
