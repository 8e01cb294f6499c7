"""The garbage collector's policy for the sidecar process: its start-up heap is frozen.

Why: after the heavy imports (DSPy, LiteLLM, LangGraph) the process tracks about 640,000
objects, and every full collection walked all of them: 100-360 ms with the event loop stopped,
several times during a long stream. Measured with `python -m bench stream` (four streams of
100,000 tokens at 2,000 tokens/s each), the last token reached the wire 130-170 ms after the
model sent it; with the start-up heap frozen, 52-55 ms. The warm-up's imports themselves ran
about a second of full collections, and left only about 3,400 garbage objects behind.

What: `warming()` wraps the sidecar's warm-up. The collector is paused while the imports run,
and afterwards everything alive is moved to the permanent generation (`gc.freeze`), which later
collections skip; then the collector runs again as usual on what is made after. Only the sidecar
process's entry point turns this on: a test process that builds many apps must not freeze its
own heap.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Generator
from contextlib import contextmanager

log = logging.getLogger(__name__)


@contextmanager
def warming(enabled: bool = True) -> Generator[None]:
    """Pause the collector for the block, then freeze what is alive and resume (whatever the
    block raised). Does nothing when `enabled` is false."""
    if not enabled:
        yield
        return
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()
        log.info("start-up heap frozen: %d objects", gc.get_freeze_count())
