"""The bundled app (`make bundle`): its size on disk and its cold start as the sidecar, against
the venv's `python -m sidecar` measured in the same run (spawn → the reply to `initialize`).

Without a bundle in dist/atrium it says so and measures nothing.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from bench._proc import REPO, LineClient, make_workspace, sidecar_argv, sidecar_env
from bench._report import Figure, Line, median, say, show, spread

NAME = "bundle"
SPAWNS = 5
BUNDLE = REPO / "dist" / "atrium"


def _size_mb(folder: Path) -> float:
    total = 0
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            path = Path(dirpath) / name
            if not path.is_symlink():
                total += path.stat().st_size
    return total / 1e6


async def _start(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    client = await LineClient.spawn(argv, env)
    await client.call("initialize", {"client_name": "bench"})
    elapsed = time.perf_counter() - started
    await client.close()
    return elapsed


async def run() -> list[Line]:
    executable = BUNDLE / "atrium"
    if not executable.is_file():
        say(f"[{NAME}] no bundle in {BUNDLE.relative_to(REPO)}: run `make bundle` first")
        return []
    say(f"[{NAME}] size and cold start, {SPAWNS} spawns each (after one unmeasured)")
    with tempfile.TemporaryDirectory(prefix="atrium-bench-") as tmp:
        root = Path(tmp)
        env = sidecar_env(root / "data", make_workspace(root / "ws"))
        bundle_argv = [str(executable), "--sidecar"]
        await _start(bundle_argv, env)
        await _start(sidecar_argv(), env)
        bundled: list[float] = []
        venv: list[float] = []
        for _ in range(SPAWNS):
            bundled.append(await _start(bundle_argv, env))
            venv.append(await _start(sidecar_argv(), env))
    lines: list[Line] = [
        Figure(NAME, "bundle size on disk", f"{_size_mb(BUNDLE):.0f} MB"),
        Figure(NAME, "venv: spawn → initialize reply", spread(venv)),
        Figure(NAME, "bundle: spawn → initialize reply", spread(bundled)),
        Figure(
            NAME, "bundle / venv cold start (medians)", f"{median(bundled) / median(venv):.2f}x"
        ),
    ]
    for line in lines:
        show(line)
    return lines
