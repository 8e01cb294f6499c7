"""Samples of the checked-results wire models (merged into `samples`)."""

from __future__ import annotations

from sidecar.protocol import TaskCheck, WireModel

CHECK_OTHER_SAMPLES: list[WireModel] = [
    TaskCheck(attempt=1, method="model", verdict="running", criteria="Names the river."),
    TaskCheck(
        attempt=1,
        method="model",
        verdict="fail",
        reasons="The answer does not name the river.",
        criteria="Names the river.",
    ),
    TaskCheck(attempt=2, method="command", verdict="pass", criteria="run: print('ok')"),
]
