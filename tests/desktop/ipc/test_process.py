"""How the desktop starts the sidecar: `python -m sidecar`, or the bundled app's `--sidecar`;
a storage refusal, and a repair flag passed for one start only."""

from __future__ import annotations

import sys

import pytest
from pytestqt.qtbot import QtBot

from desktop.ipc.process import SidecarProcess, sidecar_command
from sidecar.protocol import START_FRESH_FLAG, StorageRefusal


def test_from_source_the_sidecar_runs_as_a_module_of_this_interpreter(
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.delattr(sys, "frozen", raising=False)
    assert sidecar_command() == [sys.executable, "-m", "sidecar"]


def test_a_frozen_app_starts_itself_with_the_sidecar_role(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", "/Applications/Atrium.app/Contents/MacOS/Atrium")
    assert sidecar_command() == ["/Applications/Atrium.app/Contents/MacOS/Atrium", "--sidecar"]


def test_the_choice_can_be_asked_for_explicitly():
    assert sidecar_command("/opt/atrium/atrium", frozen=True) == ["/opt/atrium/atrium", "--sidecar"]
    assert sidecar_command("/usr/bin/python3", frozen=False) == [
        "/usr/bin/python3",
        "-m",
        "sidecar",
    ]


REFUSING_SIDECAR = r"""
import json, sys
refusal = {"problem": "damaged", "database": "/d/atrium.db", "detail": "bad", "backups": []}
sys.stderr.write("args " + json.dumps(sys.argv[1:]) + "\n")
sys.stderr.write("atrium: storage: " + json.dumps(refusal) + "\n")
sys.stderr.write("atrium: refused: the database /d/atrium.db is damaged\n")
sys.exit(78)
"""


@pytest.mark.slow
def test_a_storage_refusal_is_reported_once_and_a_repair_flag_is_passed_for_one_start(
    qtbot: QtBot,
):
    process = SidecarProcess(sys.executable, ["-c", REFUSING_SIDECAR], restart_delay_ms=0)
    died: list[int] = []
    process.died.connect(lambda code, _tail: died.append(code))
    try:
        with qtbot.waitSignal(process.storage_refused, timeout=30_000) as refused:
            process.start()
        assert refused.args == [
            StorageRefusal(problem="damaged", database="/d/atrium.db", detail="bad")
        ]
        with qtbot.waitSignal(process.storage_refused, timeout=30_000):
            process.start([START_FRESH_FLAG])

        assert died == [] and process.has_given_up
        assert process.stderr_tail().count("args []") == 1
        assert process.stderr_tail().count(f'args ["{START_FRESH_FLAG}"]') == 1
    finally:
        process.stop()
        process.deleteLater()
