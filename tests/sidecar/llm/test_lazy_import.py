"""Importing the LLM layer must not import DSPy or LiteLLM (sidecar cold start < 0.8 s), and
shutting down must not touch them while a worker thread is still importing them."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

import pytest

from sidecar.llm.planner import aclose_model_clients

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


@pytest.mark.anyio
async def test_closing_model_clients_leaves_alone_a_litellm_another_thread_is_importing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # What the warm-up leaves in sys.modules when the app quits during its LiteLLM import:
    # modules whose code is still running, marked so by the import system, without their names.
    for name in ("litellm", "sidecar.llm._coalescing"):
        half_made = ModuleType(name)
        half_made.__spec__ = ModuleSpec(name, None)
        half_made.__spec__._initializing = True  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, name, half_made)
    await aclose_model_clients()
