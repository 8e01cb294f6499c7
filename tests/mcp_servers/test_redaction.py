"""Secrets are masked by value and by shape, in one linear pass."""

from __future__ import annotations

import pytest

from mcp_servers.redaction import MASK, redact, secret_environment

SHAPED = [
    "sk-ant-api03-" + "A1b2C3d4" * 4,
    "sk-proj-" + "x" * 40,
    "AKIAIOSFODNN7EXAMPLE",
    "ghp_" + "a" * 36,
    "github_pat_" + "B" * 30,
    "glpat-" + "c" * 20,
    "xoxb-1234567890-abcdef",
    "AIza" + "d" * 35,
    "hf_" + "e" * 34,
    "Bearer eyJhbGciOiJIUzI1NiJ9.payload.signature",
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----",
]


@pytest.mark.parametrize("secret", SHAPED, ids=lambda s: s[:10])
def test_credential_shaped_strings_are_masked_in_their_context(secret: str) -> None:
    assert redact(f"before {secret} after") == f"before {MASK} after"


def test_known_values_are_masked_wherever_they_occur_longest_first() -> None:
    known = ["correct horse battery", "correct horse"]
    text = "a=correct horse battery; b=correct horse!"
    assert redact(text, known) == f"a={MASK}; b={MASK}!"


def test_short_known_values_and_ordinary_text_are_left_alone() -> None:
    text = "the key is in the sky; sk-short; AKIA12"
    assert redact(text, ["sky", "key"]) == text


def test_secret_named_environment_variables_count_as_secrets() -> None:
    env = {"OPENAI_API_KEY": "value-long-enough", "GH_TOKEN": "t0k3n-t0k3n", "HOME": "/home/me"}
    env |= {"DB_PASSWORD": "short"}
    assert sorted(secret_environment(env)) == ["t0k3n-t0k3n", "value-long-enough"]


def test_adversarial_input_finishes_in_one_pass() -> None:
    """Thousands of unterminated key headers: a backtracking engine would rescan for each."""
    text = "-----BEGIN RSA PRIVATE KEY-----\n" * 20_000 + "Bearer " * 20_000
    assert redact(text) == text
