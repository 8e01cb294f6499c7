"""Pinned Claude Code and Codex CLIs for tests, plus offline environments to run them in.

`install_agent_clis()` runs `npm install` once into the git-ignored `.cache/agent-clis/` (skipped
when the pinned versions are already there) and returns the binary paths. `claude_env()` and
`codex_env()` build a clean environment (temp HOME, no proxies, no real keys, telemetry and update
checks off) that points each CLI at a scripted model server on 127.0.0.1, so the CLIs never touch
the network. Run `python -m tests.setup.agent_clis` to pre-install.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CLAUDE_CODE_PACKAGE = "@anthropic-ai/claude-code"
CLAUDE_CODE_VERSION = "2.1.197"  # newest release whose engines allow Node 20
CODEX_PACKAGE = "@openai/codex"
CODEX_VERSION = "0.169.0"

REPO_ROOT = Path(__file__).resolve().parents[2]
CACHE_DIR = REPO_ROOT / ".cache" / "agent-clis"
INSTALL_TIMEOUT_S = 900.0

# The dummy key the Codex provider reads (its `env_key`), and the Anthropic one.
CODEX_KEY_ENV = "SCRIPTED_OPENAI_KEY"
DUMMY_KEY = "sk-scripted-not-a-real-key"


class AgentCliUnavailable(RuntimeError):
    """npm is missing or the pinned CLIs could not be installed; tests should skip."""


@dataclass(frozen=True)
class AgentClis:
    """Where the pinned CLIs live."""

    claude: Path
    codex: Path
    node_modules: Path


def _installed_version(node_modules: Path, package: str) -> str | None:
    manifest = node_modules / package / "package.json"
    try:
        return str(json.loads(manifest.read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None


def _clis(cache_dir: Path) -> AgentClis | None:
    """The installed CLIs if both pinned versions (and their binaries) are present."""
    modules = cache_dir / "node_modules"
    clis = AgentClis(modules / ".bin" / "claude", modules / ".bin" / "codex", modules)
    pins = ((CLAUDE_CODE_PACKAGE, CLAUDE_CODE_VERSION), (CODEX_PACKAGE, CODEX_VERSION))
    if all(_installed_version(modules, p) == v for p, v in pins) and all(
        os.access(b, os.X_OK) for b in (clis.claude, clis.codex)
    ):
        return clis
    return None


def node_bin_dir() -> Path | None:
    """Directory holding `node` (Codex's launcher is a Node script)."""
    node = shutil.which("node")
    return Path(node).resolve().parent if node else None


def install_agent_clis(cache_dir: Path = CACHE_DIR) -> AgentClis:
    """Install the pinned CLIs into `cache_dir` unless already there; return their paths.

    Raises AgentCliUnavailable when npm/node is missing or the install fails.
    """
    found = _clis(cache_dir)
    if found is not None:
        return found
    npm = shutil.which("npm")
    if npm is None or node_bin_dir() is None:
        raise AgentCliUnavailable("npm/node not found on PATH; cannot install the agent CLIs")
    cache_dir.mkdir(parents=True, exist_ok=True)
    with open(cache_dir / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # parallel test workers install once
        found = _clis(cache_dir)
        if found is not None:
            return found
        _npm_install(npm, cache_dir)
    found = _clis(cache_dir)
    if found is None:
        raise AgentCliUnavailable(
            f"npm install finished but the pinned CLIs are not in {cache_dir}"
        )
    return found


def _npm_install(npm: str, cache_dir: Path) -> None:
    manifest = {"name": "atrium-agent-clis", "version": "0.0.0", "private": True}
    (cache_dir / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    command = [
        npm,
        "install",
        "--no-audit",
        "--no-fund",
        "--save-exact",
        f"{CLAUDE_CODE_PACKAGE}@{CLAUDE_CODE_VERSION}",
        f"{CODEX_PACKAGE}@{CODEX_VERSION}",
    ]
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
        raise AgentCliUnavailable(f"npm install timed out after {INSTALL_TIMEOUT_S}s") from exc
    if done.returncode != 0:
        tail = (done.stderr or done.stdout)[-2000:]
        raise AgentCliUnavailable(f"npm install failed (exit {done.returncode}): {tail}")


# -- offline environments ------------------------------------------------------------------------


def _base_env(home: Path) -> dict[str, str]:
    """A clean environment: no inherited proxies, keys or CLAUDE_CODE_* / CODEX_* leftovers."""
    path = ["/usr/local/bin", "/usr/bin", "/bin"]
    node_dir = node_bin_dir()
    if node_dir is not None:
        path.insert(0, str(node_dir))
    home.mkdir(parents=True, exist_ok=True)
    return {
        "HOME": str(home),
        "PATH": os.pathsep.join(path),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
    }


def claude_env(
    base_url: str, home: Path, *, max_retries: int = 0, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Environment for `claude -p` against an Anthropic-dialect scripted server at `base_url`.

    `base_url` is the server root (`ScriptedModelServer.url`, no `/v1`).
    """
    env = _base_env(home)
    env.update(
        {
            "ANTHROPIC_BASE_URL": base_url,
            "ANTHROPIC_API_KEY": DUMMY_KEY,
            # Telemetry, error reporting, update and feature-flag calls to anthropic.com: off.
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            # Keep MCP tools in the `tools` array instead of behind ToolSearch.
            "ENABLE_TOOL_SEARCH": "false",
            # Connect --mcp-config servers before the first request (else their tools can be
            # missing from it while the server is still starting).
            "MCP_CONNECTION_NONBLOCKING": "0",
            "CLAUDE_CODE_MAX_RETRIES": str(max_retries),
        }
    )
    env.update(extra or {})
    return env


def codex_env(
    base_url: str,
    home: Path,
    *,
    model: str = "scripted",
    sandbox_mode: str = "workspace-write",
    mcp_servers: Mapping[str, Mapping[str, Any]] | None = None,
    extra_config: Mapping[str, Any] | None = None,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Environment (with a fresh `CODEX_HOME/config.toml`) for `codex exec` against a
    Responses-dialect scripted server at `base_url` (server root, no `/v1`).

    An unknown `model` name makes Codex emit one non-fatal "Model metadata ... not found" error
    item; known slugs (e.g. "gpt-5.5") avoid it but switch on deferred tools (`tool_search`).
    """
    env = _base_env(home)
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    config: dict[str, Any] = {
        "model": model,
        "model_provider": "scripted",
        "approval_policy": "never",
        "sandbox_mode": sandbox_mode,
        "check_for_update_on_startup": False,
        **(extra_config or {}),
        # Tables after root keys. These three stop the GitHub plugin sync, analytics and
        # statsig metrics (github.com, api.github.com, chatgpt.com, ab.chatgpt.com lookups).
        "analytics": {"enabled": False},
        "features": {"plugins": False},
        "otel": {"metrics_exporter": "none"},
        "model_providers": {
            "scripted": {
                "name": "scripted",
                "base_url": base_url + "/v1",
                "env_key": CODEX_KEY_ENV,
                "wire_api": "responses",
                "request_max_retries": 0,
                "stream_max_retries": 0,
            }
        },
    }
    if mcp_servers:
        config["mcp_servers"] = {name: dict(spec) for name, spec in mcp_servers.items()}
    (codex_home / "config.toml").write_text(to_toml(config))
    # Codex makes its sandbox helper reachable (PATH aliases) only when CODEX_HOME is outside
    # the temporary folder; a test's home is under /tmp, so its temporary folder moves into
    # the home. Without the aliases, Codex's bubblewrap sandbox (where the system has bwrap)
    # cannot start its helper and every command fails.
    scratch = home / "tmp"
    scratch.mkdir(exist_ok=True)
    env.update({"CODEX_HOME": str(codex_home), CODEX_KEY_ENV: DUMMY_KEY, "TMPDIR": str(scratch)})
    env.update(extra or {})
    return env


def to_toml(data: Mapping[str, Any], prefix: str = "") -> str:
    """Serialise nested dicts of str/int/float/bool/list values (enough for Codex config)."""
    lines: list[str] = []
    tables: list[tuple[str, Mapping[str, Any]]] = []
    for key, value in data.items():
        if isinstance(value, Mapping):
            tables.append((f"{prefix}{_toml_key(key)}", value))
        else:
            lines.append(f"{_toml_key(key)} = {_toml_value(value)}")
    out = "\n".join(lines) + ("\n" if lines else "")
    for name, table in tables:
        body = to_toml(table, prefix=f"{name}.")
        scalars = any(not isinstance(v, Mapping) for v in table.values())
        out += (f"\n[{name}]\n" if scalars or not table else "") + body
    return out


def _toml_key(key: str) -> str:
    bare = key.replace("_", "").replace("-", "").isalnum()
    return key if bare else json.dumps(key)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, Sequence):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def main() -> int:
    """`python -m tests.setup.agent_clis`: install (if needed) and print the binary paths."""
    started = time.monotonic()
    try:
        clis = install_agent_clis()
    except AgentCliUnavailable as exc:
        print(f"agent CLIs unavailable: {exc}", file=sys.stderr)
        return 1
    print(f"claude: {clis.claude}")
    print(f"codex:  {clis.codex}")
    print(f"ready in {time.monotonic() - started:.1f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
