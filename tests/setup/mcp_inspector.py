"""The MCP Inspector CLI (`@modelcontextprotocol/inspector`, pinned), installed once per checkout
into .cache/mcp-inspector, for tests that check a built-in server the way other clients see it."""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
from pathlib import Path

PACKAGE = "@modelcontextprotocol/inspector"
VERSION = "2.12.0"
REPO_ROOT = Path(__file__).resolve().parents[2]
CACHE_DIR = REPO_ROOT / ".cache" / "mcp-inspector"
INSTALL_TIMEOUT_S = 600


class InspectorUnavailable(RuntimeError):
    """npm/node missing, or the install failed."""


def _installed(cache_dir: Path) -> Path | None:
    manifest = cache_dir / "node_modules" / PACKAGE / "package.json"
    try:
        data = json.loads(manifest.read_text())
    except (OSError, ValueError):
        return None
    entry = cache_dir / "node_modules" / ".bin" / "mcp-inspector"
    return entry if data.get("version") == VERSION and entry.exists() else None


def install_inspector(cache_dir: Path = CACHE_DIR) -> Path:
    """The Inspector's CLI entry, installed unless already there.

    Raises:
        InspectorUnavailable: npm/node is missing or the install failed.
    """
    found = _installed(cache_dir)
    if found is not None:
        return found
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        raise InspectorUnavailable("npm/node not found on PATH; cannot install the MCP Inspector")
    cache_dir.mkdir(parents=True, exist_ok=True)
    with open(cache_dir / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = _installed(cache_dir)
        if found is None:
            manifest = {"name": "atrium-mcp-inspector", "version": "0.0.0", "private": True}
            (cache_dir / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
            command = [npm, "install", "--no-audit", "--no-fund", "--save-exact"]
            try:
                done = subprocess.run(
                    [*command, f"{PACKAGE}@{VERSION}"],
                    cwd=cache_dir,
                    capture_output=True,
                    text=True,
                    timeout=INSTALL_TIMEOUT_S,
                    check=False,
                )
            except subprocess.TimeoutExpired as exc:
                raise InspectorUnavailable("npm install of the Inspector timed out") from exc
            if done.returncode != 0:
                tail = (done.stderr or done.stdout)[-2000:]
                raise InspectorUnavailable(f"npm install failed (exit {done.returncode}): {tail}")
            found = _installed(cache_dir)
    if found is None:
        raise InspectorUnavailable(f"npm install finished but {PACKAGE} is not in {cache_dir}")
    return found
