"""The start-up heap policy, each case in a fresh interpreter (freezing the test process's own
heap would keep every later test's garbage)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any


def _run(body: str) -> dict[str, Any]:
    code = "import gc, json\nfrom sidecar.heap import warming\n" + textwrap.dedent(body)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_warming_pauses_the_collector_then_freezes_what_is_alive() -> None:
    found = _run(
        """
        kept = []
        with warming():
            during = gc.isenabled()
            for i in range(20_000):
                node = {"i": i}
                node["self"] = node  # a cycle: only the collector could free it
                kept.append(node)
        print(json.dumps({"during": during, "after": gc.isenabled(),
                          "frozen": gc.get_freeze_count()}))
        """
    )
    assert found["during"] is False
    assert found["after"] is True
    assert found["frozen"] >= 20_000


def test_a_failed_warm_up_still_freezes_and_resumes_the_collector() -> None:
    found = _run(
        """
        try:
            with warming():
                raise RuntimeError("the model could not be reached")
        except RuntimeError:
            pass
        print(json.dumps({"after": gc.isenabled(), "frozen": gc.get_freeze_count()}))
        """
    )
    assert found["after"] is True
    assert found["frozen"] > 0


def test_turned_off_it_leaves_the_collector_alone() -> None:
    found = _run(
        """
        with warming(enabled=False):
            during = gc.isenabled()
        print(json.dumps({"during": during, "frozen": gc.get_freeze_count()}))
        """
    )
    assert found == {"during": True, "frozen": 0}
