"""The agents server starts with Atrium's model settings in its environment, so an OpenClaw run
uses the same model and key as the planner."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import StdioServerParameters

from mcp_servers.agents.controllers.openclaw_state import model_from_settings
from sidecar.builtin_servers import agents_spec
from sidecar.llm.types import LMConfig


def launch_env(target: object) -> dict[str, str]:
    assert isinstance(target, StdioServerParameters) and target.env is not None
    return target.env


def test_the_model_settings_reach_the_agents_server_and_become_openclaws_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ATRIUM_MODEL", "ATRIUM_MODEL_API_BASE", "ATRIUM_MODEL_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    config = LMConfig(model="anthropic/claude-sonnet-4-5", api_base=None, api_key="sk-one")

    env = launch_env(agents_spec(tmp_path, lambda: config).target())

    assert env["ATRIUM_MODEL"] == "anthropic/claude-sonnet-4-5"
    assert env["ATRIUM_MODEL_API_KEY"] == "sk-one" and "ATRIUM_MODEL_API_BASE" not in env
    model = model_from_settings(env)
    assert model is not None and (model.api, model.model_id, model.api_key) == (
        "anthropic-messages",
        "claude-sonnet-4-5",
        "sk-one",
    )


def test_without_a_model_the_environment_is_passed_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ATRIUM_MODEL", raising=False)

    env = launch_env(agents_spec(tmp_path, lambda: None).target())

    assert "ATRIUM_MODEL" not in env and env.get("PATH")
