"""A run's own OpenClaw state folder: its config (model, workspace, tool policy) and transcript.

OpenClaw reads `~/.openclaw/openclaw.json` and keeps its sessions under `~/.openclaw/`. Each Atrium
session gets a scratch folder used as the CLI's `HOME`, so runs never touch the author's own
OpenClaw state and a resumed session finds its earlier turns. The config written there:

- the model: a custom provider `atrium` built from Atrium's model settings (`ATRIUM_MODEL`,
  `ATRIUM_MODEL_API_BASE`, `ATRIUM_MODEL_API_KEY` or the provider's usual key variable), so one
  key serves both;
- the workspace: the folder Atrium hands the controller (no bootstrap files written into it);
- the tool policy: Atrium's mode as `tools.deny` groups, plus the request's allowed/disallowed
  tools as `tools.alsoAllow`/`tools.deny`;
- no network beyond the model: catalog refresh and update checks off;
- optionally a Gateway (`gateway.port`, `gateway.auth.token`) for Gateway mode.

The transcript is read read-only from `agents/<agent>/agent/openclaw-agent.sqlite`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict

from mcp_servers.agents.parsers.openclaw_transcript import TranscriptRow, decode_row
from mcp_servers.agents.requests import PolicyMode, ToolPolicy

OpenClawApi: TypeAlias = Literal["anthropic-messages", "openai-completions", "openai-responses"]
PROVIDER_NAME = "atrium"

# Atrium's modes as OpenClaw tool denials (OpenClaw has no per-call approval on this path).
_DENIED: dict[PolicyMode, tuple[str, ...]] = {
    "read_only": (
        "write",
        "edit",
        "apply_patch",
        "group:runtime",
        "group:automation",
        "group:messaging",
        "group:nodes",
        "group:ui",
    ),
    "workspace_write": ("group:automation", "group:messaging", "group:nodes", "group:ui"),
    "full_access": (),
}
_NOTES: dict[PolicyMode, str] = {
    "read_only": (
        "OpenClaw's write/edit/apply_patch and exec tools are denied; read, ls and search stay. "
        "OpenClaw cannot ask for approval per call"
    ),
    "workspace_write": (
        "OpenClaw's file and exec tools run without asking; automation, messaging, nodes and UI "
        "tools are denied. exec is not confined to the workspace (OpenClaw has no sandbox here)"
    ),
    "full_access": "every OpenClaw tool runs without asking",
}

_DEFAULT_BASES: dict[OpenClawApi, str] = {
    "anthropic-messages": "https://api.anthropic.com",
    "openai-completions": "https://api.openai.com/v1",
    "openai-responses": "https://api.openai.com/v1",
}
_KEY_VARS: dict[str, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_API_KEY",),
    "openai": ("OPENAI_API_KEY",),
}


class OpenClawModel(BaseModel):
    """The model OpenClaw's `atrium` custom provider serves."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    api: OpenClawApi
    base_url: str
    model_id: str
    api_key: str | None = None
    context_window: int = 200_000
    max_tokens: int = 8192

    @property
    def primary(self) -> str:
        """The `provider/model` reference OpenClaw's agents use."""
        return f"{PROVIDER_NAME}/{self.model_id}"


def model_from_settings(env: Mapping[str, str], model: str | None = None) -> OpenClawModel | None:
    """The custom-provider model from Atrium's model settings, or None when none is configured.

    `model` (a run's model) wins over `ATRIUM_MODEL`. `anthropic/...` speaks Anthropic Messages
    (base URL without `/v1`); anything else Chat Completions (base URL ending in `/v1`).
    """
    name = (model or env.get("ATRIUM_MODEL") or "").strip()
    if not name:
        return None
    prefix, slash, rest = name.partition("/")
    provider = prefix.lower() if slash else ("anthropic" if name.startswith("claude") else "openai")
    model_id = rest if slash else name
    api: OpenClawApi = "anthropic-messages" if provider == "anthropic" else "openai-completions"
    base = (env.get("ATRIUM_MODEL_API_BASE") or "").strip().rstrip("/") or _DEFAULT_BASES[api]
    if api == "anthropic-messages":
        base = base.removesuffix("/v1")
    elif not base.endswith("/v1"):
        base += "/v1"
    keys = (env.get("ATRIUM_MODEL_API_KEY"), *(env.get(v) for v in _KEY_VARS.get(provider, ())))
    key = next((k for k in keys if k), None)
    return OpenClawModel(api=api, base_url=base, model_id=model_id, api_key=key)


def tool_policy(policy: ToolPolicy) -> tuple[dict[str, Any], tuple[str, ...], str]:
    """OpenClaw's `tools` config for a policy, the native settings applied, and the note."""
    deny = [*_DENIED[policy.mode], *policy.disallowed_tools]
    tools: dict[str, Any] = {}
    native: list[str] = []
    if deny:
        tools["deny"] = deny
        native += ["tools.deny", ",".join(deny)]
    if policy.allowed_tools:
        tools["alsoAllow"] = list(policy.allowed_tools)
        native += ["tools.alsoAllow", ",".join(policy.allowed_tools)]
    return tools, tuple(native), _NOTES[policy.mode]


def build_config(
    workspace: Path,
    model: OpenClawModel | None,
    policy: ToolPolicy,
    *,
    gateway_port: int | None = None,
    gateway_token: str | None = None,
) -> dict[str, Any]:
    """The `openclaw.json` of a run's state folder."""
    defaults: dict[str, Any] = {"workspace": str(workspace), "skipBootstrap": True}
    config: dict[str, Any] = {
        "update": {"checkOnStart": False},
        "models": {"catalogRefresh": {"enabled": False}},
        "agents": {"defaults": defaults},
    }
    tools, _, _ = tool_policy(policy)
    if tools:
        config["tools"] = tools
    if model is not None:
        provider: dict[str, Any] = {
            "baseUrl": model.base_url,
            "api": model.api,
            "models": [
                {
                    "id": model.model_id,
                    "name": model.model_id,
                    "input": ["text"],
                    "contextWindow": model.context_window,
                    "maxTokens": model.max_tokens,
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                }
            ],
        }
        if model.api_key:
            provider["apiKey"] = model.api_key
        config["models"]["providers"] = {PROVIDER_NAME: provider}
        defaults["model"] = {"primary": model.primary}
    if gateway_port is not None:
        gateway: dict[str, Any] = {"mode": "local", "port": gateway_port, "bind": "loopback"}
        if gateway_token:
            gateway["auth"] = {"mode": "token", "token": gateway_token}
        config["gateway"] = gateway
    return config


def write_state(state_dir: Path, config: Mapping[str, Any]) -> Path:
    """Create the state folder and write its config; returns the config file."""
    folder = state_dir / ".openclaw"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "openclaw.json"
    path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    path.chmod(0o600)
    return path


def state_env(state_dir: Path) -> dict[str, str]:
    """The variables that point the CLI at a state folder (and keep its output plain)."""
    return {
        "HOME": str(state_dir),
        "OPENCLAW_STATE_DIR": str(state_dir / ".openclaw"),
        "OPENCLAW_CONFIG_PATH": str(state_dir / ".openclaw" / "openclaw.json"),
        "NO_COLOR": "1",
    }


def transcript_db(state_dir: Path, agent_id: str) -> Path:
    """Where OpenClaw 2026.9.6 keeps an agent's session transcripts."""
    return state_dir / ".openclaw" / "agents" / agent_id / "agent" / "openclaw-agent.sqlite"


def last_seq(db: Path, session_id: str) -> int:
    """The highest transcript sequence number of the session so far (-1 if none)."""
    rows = _query(db, "SELECT max(seq) FROM transcript_events WHERE session_id = ?", session_id)
    value = rows[0][0] if rows else None
    return value if isinstance(value, int) else -1


def read_transcript(db: Path, session_id: str, after_seq: int = -1) -> list[TranscriptRow]:
    """The session's transcript rows after `after_seq`, read without writing anything.

    Rows stored compressed (`event_zstd`) are decoded when `zstandard` is importable, else
    skipped. A missing or unreadable database gives no rows.
    """
    sql = (
        "SELECT seq, event_json, event_zstd FROM transcript_events "
        "WHERE session_id = ? AND seq > ? ORDER BY seq"
    )
    out: list[TranscriptRow] = []
    for seq, text, packed in _query(db, sql, session_id, after_seq):
        if not isinstance(seq, int):
            continue
        if isinstance(text, str):
            row = decode_row(seq, text)
        elif isinstance(packed, bytes):
            row = _decode_packed(seq, packed)
        else:
            row = None
        if row is not None:
            out.append(row)
    return out


def _decode_packed(seq: int, packed: bytes) -> TranscriptRow | None:
    try:
        import zstandard
    except ImportError:
        return None
    try:
        text = zstandard.ZstdDecompressor().decompress(packed).decode("utf-8")
    except (zstandard.ZstdError, UnicodeDecodeError):
        return None
    return decode_row(seq, text)


def _query(db: Path, sql: str, *params: object) -> list[tuple[object, ...]]:
    if not db.is_file():
        return []
    try:
        connection = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True, timeout=5.0)
    except sqlite3.Error:
        return []
    try:
        return [tuple(row) for row in connection.execute(sql, params)]
    except sqlite3.Error:
        return []
    finally:
        connection.close()
