"""A pydantic ValidationError told in the author's terms: each field and its problem, one line,
without pydantic's input echo or documentation link."""

from __future__ import annotations

import pytest
from mcp.types import CallToolResult
from pydantic import BaseModel, Field, ValidationError

from mcp_servers.field_errors import describe


class Params(BaseModel):
    thread_id: str
    limit: int = Field(default=10, gt=0)


def error_of(model: type[BaseModel], value: object) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        model.model_validate(value)
    return caught.value


def test_each_problem_names_its_field_on_one_line():
    text = describe(error_of(Params, {"limit": 0}))
    assert text == "thread_id: field required; limit: input should be greater than 0"


def test_a_value_that_fits_no_member_of_a_union_reports_the_first_members_problems():
    text = describe(error_of(CallToolResult, {"content": [{"type": "text"}]}))
    assert text == "content.0.text: field required"


def test_past_the_limit_it_says_how_many_more():
    class Many(BaseModel):
        a: int
        b: int
        c: int
        d: int

    text = describe(error_of(Many, {}), limit=2)
    assert text == "a: field required; b: field required (and 2 more)"
    assert "\n" not in text and "pydantic.dev" not in text
