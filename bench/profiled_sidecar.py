"""`python -m bench.profiled_sidecar OUT`: the sidecar with a cProfile on its main thread (the
event loop), switched on by SIGUSR1 and off by SIGUSR2, which also writes the stats to OUT, so a
profile can cover steady-state turns and leave start-up and warm-up out."""

from __future__ import annotations

import cProfile
import signal
import sys
from types import FrameType


def main() -> None:
    out = sys.argv.pop(1)
    profile = cProfile.Profile()

    def start(_signum: int, _frame: FrameType | None) -> None:
        profile.enable()

    def stop(_signum: int, _frame: FrameType | None) -> None:
        profile.disable()
        profile.dump_stats(out)

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)
    from sidecar.__main__ import main as sidecar_main

    sidecar_main()


if __name__ == "__main__":
    main()
