from __future__ import annotations

import gc

from desktop.models.emitter import Emitter


class Listener:
    def __init__(self) -> None:
        self.seen: list[int] = []

    def on_value(self, value: int) -> None:
        self.seen.append(value)


def test_connected_callbacks_are_called_in_order_until_disconnected():
    emitter: Emitter[[int]] = Emitter()
    seen: list[str] = []
    first = lambda v: seen.append(f"a{v}")  # noqa: E731
    emitter.connect(first)
    emitter.connect(lambda v: seen.append(f"b{v}"))
    emitter.emit(1)
    emitter.disconnect(first)
    emitter.emit(2)
    assert seen == ["a1", "b1", "b2"]


def test_bound_methods_are_held_weakly():
    emitter: Emitter[[int]] = Emitter()
    listener = Listener()
    emitter.connect(listener.on_value)
    emitter.emit(1)
    assert listener.seen == [1]
    del listener
    gc.collect()
    emitter.emit(2)
    assert emitter._slots == []
