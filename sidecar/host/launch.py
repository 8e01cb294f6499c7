"""From a config entry to something `mcp.Client` can connect to, and the launch preview.

An app started from a desktop menu gets a poor PATH (no nvm, no ~/.local/bin), so a server whose
command is `npx` or `uvx` fails with ENOENT in other hosts. Here the command is resolved against
a sane PATH — the login shell's PATH, this process's PATH, the directory of this Python (where
pip puts console scripts), and the usual install directories — and the server gets that PATH.
The preview shows exactly that, with environment keys but never their values.
"""

from __future__ import annotations

import functools
import glob
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from sidecar.host.config import ConfigInvalidError, ServerConfig
from sidecar.host.secrets import Redactor, SecretLookup, keyring_secret, placeholders, resolve

if TYPE_CHECKING:
    from mcp import StdioServerParameters
    from mcp.server.mcpserver import MCPServer

    from sidecar.host.stdio import StdioTransport

log = logging.getLogger(__name__)

_COMMON_DIRS = (
    "~/.local/bin",
    "~/bin",
    "~/.npm-global/bin",
    "~/.volta/bin",
    "~/.bun/bin",
    "~/.deno/bin",
    "~/.cargo/bin",
    "~/.nvm/current/bin",
    "~/.local/share/pnpm",
    "~/Library/pnpm",
    "/opt/homebrew/bin",
    "/usr/local/bin",
    "/usr/bin",
    "/bin",
    "/usr/sbin",
    "/sbin",
)
# What the SDK's stdio client passes on from this process besides the config's `env`.
INHERITED_ENV_KEYS = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")


class LaunchError(RuntimeError):
    """The server cannot be launched as configured (e.g. its command is not on the PATH).
    Retrying does not help until the config or the machine changes."""


@dataclass(frozen=True, slots=True)
class HttpTarget:
    url: str
    headers: dict[str, str]


Target: TypeAlias = "MCPServer | StdioServerParameters | HttpTarget"


@dataclass(frozen=True, slots=True)
class Launch:
    """A resolved target plus the secret values it carries (masked in everything we show)."""

    target: Target
    secrets: tuple[str, ...] = ()


@functools.cache
def login_shell_path() -> tuple[str, ...]:
    """The PATH a login shell sets up (nvm, Homebrew, pyenv live there), once per process;
    empty if there is no POSIX shell or it takes longer than two seconds."""
    shell = os.environ.get("SHELL")
    if sys.platform == "win32" or not shell or not Path(shell).exists():
        return ()
    try:
        done = subprocess.run(
            [shell, "-l", "-c", 'printf "%s" "$PATH"'],
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=2,
            check=False,
            text=True,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.info("login shell PATH unavailable: %s", exc)
        return ()
    return tuple(p for p in done.stdout.strip().split(os.pathsep) if p)


def _nvm_dirs() -> list[str]:
    found = glob.glob(os.path.expanduser("~/.nvm/versions/node/*/bin"))
    return sorted(found, key=_version_key, reverse=True)


def _version_key(path: str) -> tuple[int, ...]:
    version = Path(path).parent.name.lstrip("v")
    return tuple(int(p) if p.isdigit() else 0 for p in version.split("."))


def server_path(configured: str | None = None) -> tuple[str, ...]:
    """The PATH a stdio server gets: the config's own PATH if it sets one, else the sane PATH."""
    if configured:
        candidates = configured.split(os.pathsep)
    else:
        candidates = [
            *login_shell_path(),
            *os.environ.get("PATH", "").split(os.pathsep),
            str(Path(sys.executable).parent),
            *_nvm_dirs(),
            *(os.path.expanduser(d) for d in _COMMON_DIRS),
        ]
    seen: dict[str, None] = {}
    for entry in candidates:
        if entry and entry not in seen and (configured or os.path.isdir(entry)):
            seen[entry] = None
    return tuple(seen)


def resolve_executable(command: str, path: Sequence[str], cwd: str | None = None) -> str | None:
    """The file that would run, or None."""
    if os.sep in command or (os.altsep and os.altsep in command):
        candidate = Path(command).expanduser()
        if not candidate.is_absolute() and cwd:
            candidate = Path(cwd) / candidate
        ok = candidate.is_file() and os.access(candidate, os.X_OK)
        # Not `resolve()`: a venv's python is a symlink that only works under its own name.
        return os.path.abspath(candidate) if ok else None
    return shutil.which(command, path=os.pathsep.join(path))


def build_launch(
    config: ServerConfig,
    env: Mapping[str, str] | None = None,
    secret: SecretLookup = keyring_secret,
) -> Launch:
    """Resolve placeholders, the PATH and the executable.

    Raises:
        ConfigInvalidError: a placeholder names an unset variable or secret.
        LaunchError: the command is not found on the PATH the server would get.
    """
    resolved = resolve(config, os.environ if env is None else env, secret)
    if resolved.url is not None:
        return Launch(HttpTarget(resolved.url, resolved.headers), resolved.secrets)
    from mcp import StdioServerParameters

    assert resolved.command is not None
    path = server_path(resolved.env.get("PATH"))
    executable = resolve_executable(resolved.command, path, resolved.cwd)
    if executable is None:
        raise LaunchError(
            f"command {resolved.command!r} not found on the PATH the server gets "
            f"({len(path)} directories; see the launch preview)"
        )
    if resolved.cwd and not Path(resolved.cwd).is_dir():
        raise LaunchError(f"working directory {resolved.cwd!r} does not exist")
    child_env = {"PATH": os.pathsep.join(path), **resolved.env}
    params = StdioServerParameters(
        command=executable, args=list(resolved.args), env=child_env, cwd=resolved.cwd
    )
    return Launch(params, resolved.secrets)


@dataclass(frozen=True, slots=True)
class LaunchPreview:
    """What launching would do, safe to show: no environment or header values."""

    transport: str
    command: str | None
    resolved: str | None
    args: tuple[str, ...]
    cwd: str | None
    path: tuple[str, ...]
    env_keys: tuple[str, ...]
    url: str | None
    header_keys: tuple[str, ...]
    placeholders: tuple[str, ...]
    problems: tuple[str, ...]


def preview(
    config: ServerConfig,
    env: Mapping[str, str] | None = None,
    secret: SecretLookup = keyring_secret,
) -> LaunchPreview:
    """The launch preview of a config (never raises: problems are listed instead)."""
    environ = os.environ if env is None else env
    problems: list[str] = []
    secrets: tuple[str, ...] = ()
    try:
        secrets = build_launch(config, environ, secret).secrets
    except (ConfigInvalidError, LaunchError) as exc:
        problems.append(str(exc))
    path = server_path(config.env.get("PATH")) if config.transport == "stdio" else ()
    resolved_exe = None
    if config.command and "${" not in config.command:
        resolved_exe = resolve_executable(config.command, path, config.cwd)
    inherited = [k for k in INHERITED_ENV_KEYS if k in environ or k == "PATH"]
    env_keys = tuple(sorted({*inherited, *config.env})) if config.transport == "stdio" else ()
    marks = [
        f"{kind}:{name} ({'set' if _is_set(kind, name, environ, secret) else 'missing'})"
        for kind, name in sorted(placeholders(config))
    ]
    redact = Redactor(secrets)
    return LaunchPreview(
        transport=config.transport,
        command=config.command,
        resolved=redact(resolved_exe) if resolved_exe else None,
        args=config.args,
        cwd=config.cwd,
        path=path,
        env_keys=env_keys,
        url=config.url,
        header_keys=tuple(sorted(config.headers)),
        placeholders=tuple(marks),
        problems=tuple(redact(p) for p in problems),
    )


def _is_set(kind: str, name: str, env: Mapping[str, str], secret: SecretLookup) -> bool:
    return (env.get(name) if kind == "env" else secret(name)) is not None


def stdio_transport(
    params: StdioServerParameters, on_stderr: Callable[[str], None]
) -> StdioTransport:
    """The transport a stdio server is reached through (linear-time reads, its pid, its
    stderr lines handed to `on_stderr`)."""
    from sidecar.host.stdio import StdioTransport

    return StdioTransport(params, on_stderr=on_stderr)
