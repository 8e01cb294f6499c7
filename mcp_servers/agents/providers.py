"""Which strong-agent CLIs are installed: executable lookup and `--version` probing.

A provider's executable is `$ATRIUM_CLAUDE_BIN` / `$ATRIUM_CODEX_BIN` / `$ATRIUM_OPENCLAW_BIN`
when set, else its command name (`claude`, `codex`, `openclaw`) on `PATH`. The same lookup
decides which binary a run starts, so what `agent_providers` reports is what `agent_run` uses.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from typing import Literal, get_args

import anyio
from pydantic import BaseModel, ConfigDict

from mcp_servers.agents.results import Provider

PROVIDERS: tuple[Provider, ...] = get_args(Provider)
COMMANDS: dict[Provider, str] = {"claude": "claude", "codex": "codex", "openclaw": "openclaw"}
ENV_VARS: dict[Provider, str] = {
    "claude": "ATRIUM_CLAUDE_BIN",
    "codex": "ATRIUM_CODEX_BIN",
    "openclaw": "ATRIUM_OPENCLAW_BIN",
}
VERSION_TIMEOUT_S = 15.0
NAMES: dict[Provider, str] = {"claude": "Claude Code", "codex": "Codex", "openclaw": "OpenClaw"}
INSTALL_HINTS: dict[Provider, str] = {
    "claude": "To install Claude Code, run `npm install -g @anthropic-ai/claude-code` in a "
    "terminal (npm comes with Node.js); if it is installed somewhere else, set "
    "ATRIUM_CLAUDE_BIN to its path",
    "codex": "To install Codex, run `npm install -g @openai/codex` in a terminal (npm comes "
    "with Node.js); if it is installed somewhere else, set ATRIUM_CODEX_BIN to its path",
    "openclaw": "To install OpenClaw, install Node.js 24.16 or newer, then run "
    "`npm install -g openclaw@2026.9.6` in a terminal; if it is installed somewhere else, set "
    "ATRIUM_OPENCLAW_BIN to its path",
}
"""How to install each CLI, in plain words (shown in Settings → Profiles and in failures)."""

_VERSION = re.compile(r"\d+\.\d+(?:\.\d+)?(?:[-+.][0-9A-Za-z.]+)?")


class ProviderInfo(BaseModel):
    """One CLI as found on this machine.

    `source` says where the executable came from (`env`: the ATRIUM_*_BIN variable, `path`:
    the command on PATH). `version` is the number parsed from `version_text`, the first line
    `--version` printed. `error` explains why a CLI is not usable (with the CLI's own first
    complaint, e.g. OpenClaw's "Node 20.20.2: node:sqlite is unavailable; use 24.16+"), and
    `hint` says how to install or fix it.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    provider: Provider
    installed: bool
    executable: str | None = None
    source: Literal["env", "path"] | None = None
    version: str | None = None
    version_text: str | None = None
    error: str | None = None
    hint: str | None = None


class ProvidersReport(BaseModel):
    """The `agent_providers` result: every provider Atrium knows, installed or not."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    providers: list[ProviderInfo]


def find_executable(
    provider: Provider, env: Mapping[str, str]
) -> tuple[str | None, Literal["env", "path"] | None]:
    """The executable a run of `provider` would start, and where it was found.

    An `ATRIUM_*_BIN` value without a path separator is looked up on `PATH` like a command.
    """
    configured = env.get(ENV_VARS[provider], "").strip()
    if configured:
        if os.sep in configured:
            found = configured if os.access(configured, os.X_OK) else None
        else:
            found = shutil.which(configured, path=env.get("PATH"))
        return found, "env"
    found = shutil.which(COMMANDS[provider], path=env.get("PATH"))
    return found, "path" if found else None


def not_installed(program: str) -> str:
    """What the author reads when `program` (a CLI's command or path) does not exist: which
    CLI is missing and how to install it, never the OS's "[Errno 2]"."""
    command = os.path.basename(program)
    for provider in PROVIDERS:
        if COMMANDS[provider] == command:
            hint = INSTALL_HINTS[provider]
            return f"{NAMES[provider]} is not installed here ({program!r} was not found). {hint}"
    return f"The program {program!r} is not installed here (it was not found)"


def executable_for(provider: Provider, env: Mapping[str, str]) -> str:
    """The executable to start for `provider`: the one found, else the bare command name
    (so a missing CLI becomes the controller's `cli_not_found` result)."""
    found, _ = find_executable(provider, env)
    return found or env.get(ENV_VARS[provider], "").strip() or COMMANDS[provider]


async def probe_provider(provider: Provider, env: Mapping[str, str]) -> ProviderInfo:
    """Look the CLI up and ask it for its version (bounded by `VERSION_TIMEOUT_S`)."""
    executable, source = find_executable(provider, env)
    if executable is None:
        variable = ENV_VARS[provider]
        where = f"${variable} ({env[variable]})" if env.get(variable) else "PATH"
        return ProviderInfo(
            provider=provider,
            installed=False,
            source=source,
            error=f"{COMMANDS[provider]} not found on {where}",
            hint=INSTALL_HINTS[provider],
        )
    info = ProviderInfo(provider=provider, installed=True, executable=executable, source=source)
    try:
        text = await _version_line(executable, env)
    except subprocess.CalledProcessError as exc:
        said = _first_line(exc.stderr) or _first_line(exc.stdout)
        error = f"`{executable} --version` exited with {exc.returncode}" + (
            f": {said}" if said else ""
        )
        return info.model_copy(update={"error": error, "hint": INSTALL_HINTS[provider]})
    except (OSError, subprocess.SubprocessError, TimeoutError) as exc:
        return info.model_copy(update={"error": f"`{executable} --version` failed: {exc}"})
    match = _VERSION.search(text)
    return info.model_copy(
        update={"version_text": text or None, "version": match.group(0) if match else None}
    )


async def probe_providers(env: Mapping[str, str]) -> ProvidersReport:
    """Every provider's `ProviderInfo`, probed concurrently."""
    found: dict[Provider, ProviderInfo] = {}

    async def probe(provider: Provider) -> None:
        found[provider] = await probe_provider(provider, env)

    async with anyio.create_task_group() as group:
        for provider in PROVIDERS:
            group.start_soon(probe, provider)
    return ProvidersReport(providers=[found[p] for p in PROVIDERS])


async def _version_line(executable: str, env: Mapping[str, str]) -> str:
    """The first non-empty line of `executable --version` (stdout, else stderr).

    Raises:
        OSError: the executable could not be started.
        subprocess.CalledProcessError: it exited non-zero.
        TimeoutError: it did not answer in time.
    """
    with anyio.fail_after(VERSION_TIMEOUT_S):
        done = await anyio.run_process(
            [executable, "--version"], stdin=subprocess.DEVNULL, env=dict(env), check=True
        )
    for stream in (done.stdout, done.stderr):
        for line in stream.decode("utf-8", errors="replace").splitlines():
            if line.strip():
                return line.strip()
    return ""


def _first_line(output: object) -> str:
    """The first non-empty line of a process's captured output (bytes or text)."""
    if isinstance(output, bytes):
        output = output.decode("utf-8", errors="replace")
    if not isinstance(output, str):
        return ""
    return next((line.strip() for line in output.splitlines() if line.strip()), "")
