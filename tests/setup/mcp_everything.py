"""The pinned `@modelcontextprotocol/server-everything` for the client-feature tests.

`install_everything()` runs `npm install` once into the git-ignored `.cache/mcp-everything/`
(skipped when the pinned version is already there) and returns how to launch it over stdio or
streamable HTTP. Run `python -m tests.setup.mcp_everything` to pre-install.

The streamable HTTP mode calls express's `app.listen(PORT)` with no host argument (checked in
the pinned release: there is no HOST option), which would bind every interface. So the HTTP
command preloads `loopback.cjs` (written next to the install), which makes any `listen(port)`
without a host listen on 127.0.0.1 only.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "@modelcontextprotocol/server-everything"
VERSION = "2026.8.31"

REPO_ROOT = Path(__file__).resolve().parents[2]
CACHE_DIR = REPO_ROOT / ".cache" / "mcp-everything"
INSTALL_TIMEOUT_S = 600.0

LOOPBACK_PRELOAD = """\
// Written by tests/setup/mcp_everything.py: listen(port) without a host binds 127.0.0.1 only.
const net = require("net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  const isPort = typeof first === "number" || (typeof first === "string" && /^\\d+$/.test(first));
  if (isPort && typeof args[1] !== "string") {
    args.splice(1, 0, "127.0.0.1");
  } else if (first && typeof first === "object" && !first.host && !first.path) {
    args[0] = { ...first, host: "127.0.0.1" };
  }
  return listen.apply(this, args);
};
"""


class EverythingUnavailable(RuntimeError):
    """npm/node is missing or the pinned server could not be installed; tests should skip."""


@dataclass(frozen=True)
class Everything:
    """Where the pinned server lives and how to start it."""

    node: Path
    entry: Path
    preload: Path

    def stdio_command(self) -> list[str]:
        return [str(self.node), str(self.entry), "stdio"]

    def http_command(self) -> list[str]:
        """Streamable HTTP on `PORT` (env), bound to 127.0.0.1 by the preload."""
        return [str(self.node), "--require", str(self.preload), str(self.entry), "streamableHttp"]

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        """A small environment for the server (the SDK's stdio client passes no other)."""
        env = {
            "PATH": os.pathsep.join([str(self.node.parent), "/usr/local/bin", "/usr/bin", "/bin"]),
            "HOME": os.environ.get("HOME", "/tmp"),
            "LANG": "C.UTF-8",
        }
        env.update(extra or {})
        return env


def _installed(cache_dir: Path) -> Everything | None:
    modules = cache_dir / "node_modules"
    manifest = modules / PACKAGE / "package.json"
    node = shutil.which("node")
    if node is None:
        return None
    try:
        data = json.loads(manifest.read_text())
    except (OSError, ValueError):
        return None
    if data.get("version") != VERSION:
        return None
    bin_field = data.get("bin")
    relative = next(iter(bin_field.values())) if isinstance(bin_field, dict) else bin_field
    if not isinstance(relative, str):
        return None
    entry = (modules / PACKAGE / relative).resolve()
    if not entry.is_file():
        return None
    preload = cache_dir / "loopback.cjs"
    if not preload.is_file() or preload.read_text() != LOOPBACK_PRELOAD:
        preload.write_text(LOOPBACK_PRELOAD)
    return Everything(Path(node).resolve(), entry, preload)


def install_everything(cache_dir: Path = CACHE_DIR) -> Everything:
    """Install the pinned server into `cache_dir` unless already there; return its launch info.

    Raises:
        EverythingUnavailable: npm/node is missing or the install failed.
    """
    found = _installed(cache_dir)
    if found is not None:
        return found
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        raise EverythingUnavailable("npm/node not found on PATH; cannot install server-everything")
    cache_dir.mkdir(parents=True, exist_ok=True)
    with open(cache_dir / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # parallel test workers install once
        found = _installed(cache_dir)
        if found is None:
            _npm_install(npm, cache_dir)
            found = _installed(cache_dir)
    if found is None:
        raise EverythingUnavailable(f"npm install finished but {PACKAGE} is not in {cache_dir}")
    return found


def _npm_install(npm: str, cache_dir: Path) -> None:
    manifest = {"name": "atrium-mcp-everything", "version": "0.0.0", "private": True}
    (cache_dir / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    command = [npm, "install", "--no-audit", "--no-fund", "--save-exact", f"{PACKAGE}@{VERSION}"]
    try:
        done = subprocess.run(
            command,
            cwd=cache_dir,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise EverythingUnavailable(f"npm install timed out after {INSTALL_TIMEOUT_S}s") from exc
    if done.returncode != 0:
        tail = (done.stderr or done.stdout)[-2000:]
        raise EverythingUnavailable(f"npm install failed (exit {done.returncode}): {tail}")


def free_port() -> int:
    """A port that was free on 127.0.0.1 a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def http_server(everything: Everything, *, start_timeout_s: float = 30.0) -> Iterator[str]:
    """Run the server over streamable HTTP on a free 127.0.0.1 port; yields its `/mcp` URL."""
    port = free_port()
    process = subprocess.Popen(
        everything.http_command(),
        env=everything.env({"PORT": str(port)}),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_listening(process, port, start_timeout_s)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr is not None:
            process.stderr.close()


def _wait_listening(process: subprocess.Popen[str], port: int, timeout_s: float) -> None:
    """Read stderr until the server says it listens (it prints that once bound)."""
    stream = process.stderr
    assert stream is not None
    deadline = time.monotonic() + timeout_s
    seen: list[str] = []
    while time.monotonic() < deadline:
        ready, _, _ = select.select([stream], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        line = stream.readline()
        if not line:
            break
        seen.append(line.rstrip())
        if f"listening on port {port}" in line:
            return
    raise EverythingUnavailable(f"HTTP server did not start on {port}: {seen[-5:]}")


def main() -> int:
    """`python -m tests.setup.mcp_everything`: install (if needed) and print the entry point."""
    started = time.monotonic()
    try:
        everything = install_everything()
    except EverythingUnavailable as exc:
        print(f"server-everything unavailable: {exc}", file=sys.stderr)
        return 1
    print(f"{PACKAGE}@{VERSION}: {everything.entry}")
    print(f"ready in {time.monotonic() - started:.1f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
