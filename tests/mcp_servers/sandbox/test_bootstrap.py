"""The kernel layers on their own, without the Python guard in front of them.

Each test runs a throwaway interpreter that loads the bootstrap, applies one layer and then tries
the forbidden thing directly, so a pass proves the kernel (not the audit hook) refused it. Where
the kernel or privileges do not allow the layer, the test is skipped rather than faked.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_servers.sandbox.runner import BOOTSTRAP

pytestmark = pytest.mark.slow

_PRELUDE = f"""
import importlib.util, os, socket, sys
spec = importlib.util.spec_from_file_location("bootstrap", {str(BOOTSTRAP)!r})
b = importlib.util.module_from_spec(spec)
spec.loader.exec_module(b)
"""


def run_child(body: str, cwd: Path) -> str:
    """Run the prelude plus ``body`` in a fresh interpreter and return its stdout."""
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", _PRELUDE + body],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip()


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP listener on 127.0.0.1 that a confined child must not reach."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        yield server.getsockname()[1]


def test_the_network_namespace_cuts_off_even_loopback(tmp_path: Path, listener: int) -> None:
    out = run_child(
        f"""
if not b.isolate_network():
    print("unsupported"); sys.exit(0)
try:
    socket.create_connection(("127.0.0.1", {listener}), timeout=5)
    print("connected")
except OSError:
    print("unreachable")
""",
        tmp_path,
    )
    if out == "unsupported":
        pytest.skip("network namespaces are not permitted here")
    assert out == "unreachable"


def test_landlock_confines_writes_and_reads_to_the_run_directory(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (tmp_path / "secret.txt").write_text("secret")
    out = run_child(
        f"""
if not b.restrict_filesystem({str(run_dir)!r}, [sys.base_prefix]):
    print("unsupported"); sys.exit(0)
results = []
for label, action in [
    ("write_inside", lambda: open("inside.txt", "w").write("ok")),
    ("write_parent", lambda: open("../escape.txt", "w")),
    ("read_outside", lambda: open("../secret.txt").read()),
    ("mkdir_outside", lambda: os.mkdir("../newdir")),
]:
    try:
        action()
        results.append(label + "=ok")
    except PermissionError:
        results.append(label + "=denied")
print(",".join(results))
""",
        run_dir,
    )
    if out == "unsupported":
        pytest.skip("Landlock is not available in this kernel")
    assert out == "write_inside=ok,write_parent=denied,read_outside=denied,mkdir_outside=denied"
    assert not (tmp_path / "escape.txt").exists()
    assert not (tmp_path / "newdir").exists()


def test_landlock_tcp_rules_refuse_connecting_without_a_namespace(
    tmp_path: Path, listener: int
) -> None:
    out = run_child(
        f"""
if b.landlock_abi() < 4 or not b.restrict_filesystem(os.getcwd(), [sys.base_prefix]):
    print("unsupported"); sys.exit(0)
try:
    socket.create_connection(("127.0.0.1", {listener}), timeout=5)
    print("connected")
except PermissionError:
    print("denied")
""",
        tmp_path,
    )
    if out == "unsupported":
        pytest.skip("Landlock ABI 4 (TCP rules) is not available")
    assert out == "denied"


def test_rlimits_bound_memory(tmp_path: Path) -> None:
    out = run_child(
        """
b.apply_rlimits(256 * 1024 * 1024, 10, 1024 * 1024)
try:
    bytearray(2 * 1024 ** 3)
    print("allocated")
except MemoryError:
    print("memory_error")
""",
        tmp_path,
    )
    assert out == "memory_error"
