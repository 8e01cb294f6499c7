"""A day of dialogs in one window with the cyclic garbage collector freeing each closed one.

Closed dialogs sit in reference cycles with their controllers, so the collector frees them at
some moment of its choosing. This runs a day's worth of questions (and Settings and About) in a
subprocess, collecting after each, so a binding that crashes while freeing a closed dialog
fails this test instead of killing the test run or, later, the author's window.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
QUESTIONS = 400


def test_four_hundred_questions_answered_with_the_collector_running_leave_the_window_alive():
    completed = subprocess.run(
        [sys.executable, "-m", "tests.desktop.views.day_of_dialogs", str(QUESTIONS)],
        cwd=REPO,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-4000:]
    result = json.loads(completed.stdout.strip().splitlines()[-1])
    assert result["shown"] == QUESTIONS
    assert result["collected"] > 0  # closed dialogs really were freed by the collector
    assert result["alive"] == 1
