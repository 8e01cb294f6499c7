from __future__ import annotations

import ast
from pathlib import Path

import desktop.ipc
from desktop.ipc.health import RestartPolicy, TailBuffer


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_restart_policy_allows_three_restarts_per_minute():
    clock = Clock()
    policy = RestartPolicy(max_restarts=3, window_s=60.0, clock=clock)
    assert [policy.allow_restart() for _ in range(4)] == [True, True, True, False]
    clock.now = 59.0
    assert not policy.allow_restart()
    clock.now = 60.0
    assert policy.allow_restart()


def test_restart_policy_reset_restores_the_budget():
    policy = RestartPolicy(max_restarts=1, clock=Clock())
    assert policy.allow_restart()
    assert not policy.allow_restart()
    policy.reset()
    assert policy.allow_restart()


def test_tail_buffer_keeps_only_the_last_bytes():
    tail = TailBuffer(max_bytes=5)
    tail.append(b"hello ")
    tail.append(b"world")
    assert tail.text() == "world"
    tail.clear()
    assert tail.text() == ""


def test_the_pure_ipc_pieces_do_not_import_qt():
    package = Path(desktop.ipc.__file__).parent
    for name in ("framing.py", "health.py", "pending.py", "errors.py"):
        tree = ast.parse((package / name).read_text())
        imported = {
            node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
        } | {
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        }
        assert not any(
            module.startswith(("PySide6", "desktop.ipc.client", "desktop.ipc.process"))
            for module in imported
        ), name
