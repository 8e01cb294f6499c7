"""`${env:NAME}` and `${secret:NAME}` placeholders in server configs.

Secrets live in the OS keyring (service `atrium-mcp`, user = the secret's name). They are read
at launch, handed only to the server's process (environment, arguments) or its HTTP headers, and
never written to the config, the database, logs, traces or checkpoints; the server's stderr and
the protocol log are redacted before anyone can read them.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from sidecar.host.config import ConfigInvalidError, ConfigIssue, ServerConfig
from sidecar.keychain import KEYCHAIN, SECRETS_SERVICE

log = logging.getLogger(__name__)

KEYRING_SERVICE = SECRETS_SERVICE
SECRET_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,127}$")
_PLACEHOLDER = re.compile(r"\$\{(env|secret):([^}]*)\}")
_MASK = "[redacted]"

SecretLookup = Callable[[str], "str | None"]


def keyring_secret(name: str) -> str | None:
    """The secret from the OS keyring, or None (also when no keyring backend works)."""
    return KEYCHAIN.get(KEYRING_SERVICE, name)


def set_keyring_secret(name: str, value: str | None) -> None:
    """Store (or, with None, remove) a secret.

    Raises:
        ValueError: the name is not a valid secret name.
        KeyringUnavailableError: no usable keyring backend.
    """
    if not SECRET_NAME.match(name):
        raise ValueError(f"{name!r} is not a valid secret name")
    KEYCHAIN.set(KEYRING_SERVICE, name, value)


@dataclass(frozen=True, slots=True)
class ResolvedConfig:
    """A config with every placeholder replaced: only for launching, never for storing."""

    command: str | None
    args: tuple[str, ...]
    env: dict[str, str]
    cwd: str | None
    url: str | None
    headers: dict[str, str]
    secrets: tuple[str, ...]


class _Resolver:
    def __init__(self, server: str, env: Mapping[str, str], secret: SecretLookup) -> None:
        self.server = server
        self.env = env
        self.secret = secret
        self.used: list[str] = []
        self.issues: list[ConfigIssue] = []

    def __call__(self, text: str, where: str) -> str:
        def replace(match: re.Match[str]) -> str:
            kind, name = match.group(1), match.group(2)
            value = self.env.get(name) if kind == "env" else self.secret(name)
            if value is None:
                source = "environment variable" if kind == "env" else "secret (keyring)"
                self.issues.append(ConfigIssue(f"{source} {name!r} is not set", self.server, where))
                return ""
            if kind == "secret":
                self.used.append(value)
            return value

        return _PLACEHOLDER.sub(replace, text)


def resolve(config: ServerConfig, env: Mapping[str, str], secret: SecretLookup) -> ResolvedConfig:
    """Replace the placeholders of every launch field.

    Raises:
        ConfigInvalidError: a placeholder names an unset variable or secret (each issue says
            which field).
    """
    sub = _Resolver(config.name, env, secret)
    resolved = ResolvedConfig(
        command=sub(config.command, "command") if config.command else None,
        args=tuple(sub(a, f"args.{i}") for i, a in enumerate(config.args)),
        env={k: sub(v, f"env.{k}") for k, v in config.env.items()},
        cwd=sub(config.cwd, "cwd") if config.cwd else None,
        url=sub(config.url, "url") if config.url else None,
        headers={k: sub(v, f"headers.{k}") for k, v in config.headers.items()},
        secrets=(),
    )
    if sub.issues:
        raise ConfigInvalidError(sub.issues)
    return ResolvedConfig(
        resolved.command,
        resolved.args,
        resolved.env,
        resolved.cwd,
        resolved.url,
        resolved.headers,
        tuple(sorted(set(sub.used), key=len, reverse=True)),
    )


def placeholders(config: ServerConfig) -> set[tuple[str, str]]:
    """Every `(kind, name)` placeholder the config uses (for the launch preview)."""
    texts: list[str] = [config.command or "", config.url or "", config.cwd or "", *config.args]
    texts += [*config.env.values(), *config.headers.values()]
    return {(m.group(1), m.group(2)) for t in texts for m in _PLACEHOLDER.finditer(t)}


class Redactor:
    """Masks known secret values in text that leaves the host (stderr tail, protocol log)."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self.secrets = tuple(s for s in secrets if len(s) >= 4)

    def __call__(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, _MASK)
        return text
