"""The Qt binding survives a day of signal traffic.

This test guards the PySide6 pin in pyproject.toml: PySide6 6.12.0 on CPython 3.11 drops a
reference to `True` on every `Signal.emit` and aborts the process (SIGABRT in `bool_dealloc`)
after a few thousand emissions, which is what a streamed answer of a few thousand tokens does.
The pin is lifted only when this test passes on the newer binding.

The emissions run in a subprocess, so a crash of the binding fails this test instead of
killing the test run.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

EMISSIONS = 300_000

_SCRIPT = textwrap.dedent(
    """
    import sys

    from PySide6.QtCore import QCoreApplication, QObject, Signal


    class Source(QObject):
        text_emitted = Signal(str)
        payload_emitted = Signal(object)


    class Sink(QObject):
        def __init__(self):
            super().__init__()
            self.texts = 0
            self.payloads = 0

        def on_text_emitted(self, text):
            self.texts += 1

        def on_payload_emitted(self, payload):
            self.payloads += payload["n"] >= 0


    app = QCoreApplication([])
    source, sink = Source(), Sink()
    source.text_emitted.connect(sink.on_text_emitted)
    source.payload_emitted.connect(sink.on_payload_emitted)
    half = int(sys.argv[1]) // 2
    for n in range(half):
        source.text_emitted.emit(f"token {n} ")
        source.payload_emitted.emit({"n": n, "text": "token", "done": n % 2 == 0})
    print(sink.texts, sink.payloads)
    """
)


def test_300000_signal_emissions_with_str_and_dict_payloads_leave_the_process_alive() -> None:
    completed = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(EMISSIONS)],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        env={"QT_QPA_PLATFORM": "offscreen", "PATH": ""},
    )
    assert completed.returncode == 0, (completed.returncode, completed.stderr[-2000:])
    assert completed.stdout.split() == [str(EMISSIONS // 2), str(EMISSIONS // 2)]
