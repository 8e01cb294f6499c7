"""A form answer is checked against the server's schema before it is accepted."""

from __future__ import annotations

from typing import Any

import pytest

from sidecar.host.features.elicit import (
    check_content,
    elicit_result,
    enum_values,
    form_payload,
    with_defaults,
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 2, "maxLength": 10},
        "agree": {"type": "boolean"},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "score": {"type": "number", "minimum": 0, "maximum": 1},
        "pet": {"type": "string", "enum": ["cat", "dog"]},
        "hero": {"type": "string", "oneOf": [{"const": "h1", "title": "Superman"}]},
        "tools": {
            "type": "array",
            "minItems": 1,
            "maxItems": 2,
            "items": {"type": "string", "enum": ["saw", "axe", "awl"]},
        },
    },
    "required": ["name"],
}


def test_a_complete_answer_fits() -> None:
    content = {
        "name": "Ada",
        "agree": True,
        "age": 36,
        "score": 0.5,
        "pet": "cat",
        "hero": "h1",
        "tools": ["saw", "axe"],
    }
    assert check_content(SCHEMA, content) is None


@pytest.mark.parametrize(
    "content",
    [
        {},
        {"name": ""},
        {"name": "A"},
        {"name": "Ada", "agree": "yes"},
        {"name": "Ada", "age": 3.5},
        {"name": "Ada", "age": -1},
        {"name": "Ada", "age": True},
        {"name": "Ada", "score": 2},
        {"name": "Ada", "pet": "cow"},
        {"name": "Ada", "hero": "h9"},
        {"name": "Ada", "tools": []},
        {"name": "Ada", "tools": ["saw", "axe", "awl"]},
        {"name": "Ada", "tools": ["drill"]},
        {"name": "Ada", "colour": "red"},
    ],
)
def test_an_answer_that_breaks_the_schema_is_named(content: dict[str, Any]) -> None:
    assert check_content(SCHEMA, content) is not None


def test_optional_fields_may_be_left_empty() -> None:
    assert check_content(SCHEMA, {"name": "Ada", "age": None}) is None


def test_enums_come_from_enum_or_titled_options() -> None:
    assert enum_values(SCHEMA["properties"]["pet"]) == ["cat", "dog"]
    assert enum_values(SCHEMA["properties"]["hero"]) == ["h1"]
    assert enum_values(SCHEMA["properties"]["name"]) is None


class _UrlParams:
    message = "Sign in"
    url = "https://example.invalid/login"


def test_a_url_request_becomes_a_form_with_the_link_and_no_fields() -> None:
    payload = form_payload("srv", _UrlParams())
    assert payload["url"] == "https://example.invalid/login"
    assert payload["requested_schema"] == {}
    assert elicit_result({"action": "accept"}, url_mode=True).content is None


def test_answers_map_to_the_three_elicit_actions() -> None:
    accepted = elicit_result({"action": "accept", "content": {"name": "Ada"}})
    assert (accepted.action, accepted.content) == ("accept", {"name": "Ada"})
    assert elicit_result({"action": "decline"}).action == "decline"
    assert elicit_result({"action": "cancel"}).action == "cancel"


def test_an_accepted_form_gets_the_servers_defaults_for_the_fields_left_out() -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "verified": {"type": "boolean", "default": True},
            "note": {"type": "string"},
        },
        "required": ["name"],
    }
    answer = {"action": "accept", "content": {"age": 41}}
    filled = with_defaults(schema, answer)
    assert filled == {
        "action": "accept",
        "content": {"age": 41, "name": "John Doe", "verified": True},
    }
    assert check_content(schema, filled["content"]) is None
    assert with_defaults(schema, {"action": "decline"}) == {"action": "decline"}
