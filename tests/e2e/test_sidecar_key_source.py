"""Settings says truthfully where the model's key comes from, through the real sidecar."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.harness import Sidecar

pytestmark = pytest.mark.anyio

MODEL = {"ATRIUM_MODEL": "openai/gpt-4o-mini"}


def _keyring(tmp_path: Path, key: str | None) -> dict[str, str]:
    path = tmp_path / "keyring.json"
    path.write_text(json.dumps({"atrium/model_api_key": key} if key else {}))
    return {
        "PYTHON_KEYRING_BACKEND": "tests.fakes.keyring_file.FileKeyring",
        "ATRIUM_TEST_KEYRING": str(path),
    }


async def _settings(data: Path, workspace: Path, **env: str) -> dict[str, object]:
    process = await Sidecar.start(data, workspace, **env)
    try:
        return await process.call("settings/get")
    finally:
        await process.kill()


@pytest.mark.parametrize(
    ("env", "keyring_key", "source", "variable"),
    [
        ({"ATRIUM_MODEL_API_KEY": "sk-env"}, "sk-ring", "environment", "ATRIUM_MODEL_API_KEY"),
        ({"OPENAI_API_KEY": "sk-prov"}, "sk-ring", "provider", "OPENAI_API_KEY"),
        ({}, "sk-ring", "keyring", None),
        ({}, None, "none", None),
    ],
    ids=["atrium-variable", "provider-variable", "keyring", "nowhere"],
)
async def test_settings_get_names_the_key_source(  # noqa: PLR0917 (parametrized)
    sidecar_data: Path,
    workspace: Path,
    tmp_path: Path,
    env: dict[str, str],
    keyring_key: str | None,
    source: str,
    variable: str | None,
):
    got = await _settings(
        sidecar_data, workspace, **MODEL, **env, **_keyring(tmp_path, keyring_key)
    )
    assert (got["api_key_source"], got["api_key_variable"]) == (source, variable)
    assert got["has_api_key"] is (source != "none")
    assert not any(key in json.dumps(got) for key in ("sk-env", "sk-prov", "sk-ring"))
