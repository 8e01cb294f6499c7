"""Masking secrets in text before it is stored (tool results, traces).

Two kinds of evidence: the *values* the caller knows are secret (keyring entries, environment
variables named like keys), replaced wherever they occur; and *shapes* of well-known credentials
(API keys of the big providers, cloud and VCS tokens, bearer tokens, private key blocks), found by
patterns matched by RE2 in one linear pass over the text. The built-in servers use it as well as
the sidecar.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

from mcp_servers import linear_re

MASK = "[redacted]"
MIN_SECRET_CHARS = 8
"""Known values shorter than this are not masked (a 3-letter 'secret' would mask words)."""

_PATTERNS = (
    r"sk-ant-[A-Za-z0-9_\-]{20,}",
    r"sk-(?:proj-|svcacct-)?[A-Za-z0-9_\-]{20,}",
    r"(?:AKIA|ASIA)[0-9A-Z]{16}",
    r"gh[pousr]_[A-Za-z0-9]{30,}",
    r"github_pat_[A-Za-z0-9_]{22,}",
    r"glpat-[A-Za-z0-9_\-]{20,}",
    r"xox[abposr]-[A-Za-z0-9\-]{10,}",
    r"AIza[0-9A-Za-z_\-]{35}",
    r"hf_[A-Za-z0-9]{30,}",
    r"(?i:bearer)\s+[A-Za-z0-9._~+/\-]{20,}=*",
    r"-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----[\s\S]*?-----END [A-Z ]{0,40}PRIVATE KEY-----",
)
_SHAPES = linear_re.compile_pattern("|".join(f"(?:{p})" for p in _PATTERNS))
_SECRET_NAME = re.compile(r"(?i)(key|token|secret|password|passwd|credential)")


def secret_environment(env: Mapping[str, str] | None = None) -> list[str]:
    """Values of environment variables whose names say they hold a secret."""
    environ = os.environ if env is None else env
    return [v for k, v in environ.items() if _SECRET_NAME.search(k) and len(v) >= MIN_SECRET_CHARS]


def redact(text: str, known: Iterable[str] = ()) -> str:
    """`text` with every known secret value and every credential-shaped string masked."""
    for value in sorted({v for v in known if len(v) >= MIN_SECRET_CHARS}, key=len, reverse=True):
        text = text.replace(value, MASK)
    return _SHAPES.sub(MASK, text)
