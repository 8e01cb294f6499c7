"""SQL lives in `sidecar/store` (and LangGraph's checkpointer in `sidecar/runtime/checkpoints.py`):
no other sidecar module imports an SQLite driver or touches a raw connection (DESIGN.md §2,
§16). Checked on the source's syntax tree, so a comment or a string that mentions them is no
offence, and every offence is reported as file:line."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SIDECAR = Path(__file__).parents[3] / "sidecar"
ALLOWED = ("store/", "runtime/checkpoints.py")
DRIVERS = (
    "sqlite3",
    "aiosqlite",
    "sqlite_vec",
    "langgraph.checkpoint.sqlite",
    "langgraph.store.sqlite",
)
CONNECTION_CALLS = frozenset({"execute", "executemany", "executescript"})


def _is_driver(module: str) -> bool:
    return any(module == d or module.startswith(f"{d}.") for d in DRIVERS)


def offences(source: str) -> Iterator[tuple[int, str]]:
    """(line, what) for each driver import, `.conn` and `.execute*(` call in `source`."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _is_driver(alias.name):
                    yield node.lineno, f"imports {alias.name}"
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if _is_driver(node.module):
                yield node.lineno, f"imports from {node.module}"
        elif isinstance(node, ast.Attribute) and node.attr == "conn":
            yield node.lineno, "uses a raw connection (.conn)"
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in CONNECTION_CALLS
        ):
            yield node.lineno, f"runs SQL (.{node.func.attr}(...))"


def _outside_the_store() -> list[Path]:
    return [
        path
        for path in sorted(SIDECAR.rglob("*.py"))
        if not path.relative_to(SIDECAR).as_posix().startswith(ALLOWED)
    ]


def test_no_sidecar_module_outside_the_store_touches_sql() -> None:
    found = [
        f"sidecar/{path.relative_to(SIDECAR).as_posix()}:{line}: {what}"
        for path in _outside_the_store()
        for line, what in offences(path.read_text(encoding="utf-8"))
    ]
    assert found == [], "SQL outside sidecar/store:\n" + "\n".join(found)


def test_the_walk_covers_the_sidecar_but_not_the_store() -> None:
    walked = {path.relative_to(SIDECAR).as_posix() for path in _outside_the_store()}
    assert {"app.py", "context/assemble.py", "runtime/queueing.py"} <= walked
    assert not any(p.startswith("store/") for p in walked)
    assert "runtime/checkpoints.py" not in walked


def test_each_kind_of_offence_is_found_with_its_line() -> None:
    source = "\n".join(
        [
            "import sqlite3",
            "from langgraph.store.sqlite import SqliteStore",
            "rows = store.conn",
            "db.execute('SELECT 1')",
            "db.executemany('INSERT', [])",
            "# store.conn.execute('in a comment')",
            "text = 'store.conn.execute(\"in a string\")'",
            "run = tool.run(arguments)",
        ]
    )
    assert sorted(line for line, _ in offences(source)) == [1, 2, 3, 4, 5]
