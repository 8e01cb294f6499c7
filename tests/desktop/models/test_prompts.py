"""The composer's slash-command logic without Qt: completions, prompt lines, arguments."""

from __future__ import annotations

import pytest

from desktop.models.prompts import (
    BUILTIN_COMMANDS,
    CommandChoice,
    PromptInvocation,
    PromptLineError,
    choices_for,
    completion_prefix,
    filled_arguments,
    insert_block,
    is_prompt_line,
    match_completions,
    missing_required,
    parse_prompt_line,
    read_prompt_request,
    unknown_arguments,
)
from sidecar.protocol import PromptArgumentInfo, PromptInfo


def prompt(server: str, name: str, *args: PromptArgumentInfo, description: str = "") -> PromptInfo:
    return PromptInfo(
        server=server, name=name, description=description or None, arguments=args,
        command=f"/{server}:{name}",
    )  # fmt: skip


def arg(name: str, required: bool = False) -> PromptArgumentInfo:
    return PromptArgumentInfo(name=name, required=required)


SUMMARIZE = prompt("docs", "summarize", arg("path", True), arg("style"), description="Sum up")
CONVERT = prompt("time", "convert", arg("time", True), arg("zone", True))
OUTLINE = prompt("docs", "outline")


def commands(choices: list[CommandChoice]) -> list[str]:
    return [choice.command for choice in choices]


def test_choices_list_the_builtin_commands_then_prompts_by_server_and_name():
    choices = choices_for([CONVERT, SUMMARIZE, OUTLINE])
    assert commands(choices) == [
        "/tools", "/call", "/delegate", "/plan",
        "/docs:outline", "/docs:summarize", "/time:convert",
    ]  # fmt: skip
    assert choices[5].prompt == SUMMARIZE and choices[5].description == "Sum up"
    assert all(choice.prompt is None for choice in choices[: len(BUILTIN_COMMANDS)])


def test_a_bare_slash_matches_everything():
    choices = choices_for([SUMMARIZE, CONVERT])
    assert match_completions(choices, "/") == choices


def test_prefix_matches_come_before_matches_inside_the_command():
    choices = choices_for([SUMMARIZE, CONVERT, prompt("time", "to_plan")])
    assert commands(match_completions(choices, "/PL")) == ["/plan", "/time:to_plan"]
    assert commands(match_completions(choices, "/sum")) == ["/docs:summarize"]
    assert match_completions(choices, "/nothing") == []


def test_the_popup_prefix_is_the_draft_only_while_it_is_one_slash_word():
    assert completion_prefix("/") == "/"
    assert completion_prefix("/docs:su") == "/docs:su"
    assert completion_prefix("/docs:summarize path=a") is None
    assert completion_prefix("/tools\n") is None
    assert completion_prefix("hello /docs") is None
    assert completion_prefix("") is None


def test_a_prompt_line_is_a_server_colon_name_command():
    assert is_prompt_line("/docs:summarize path=a.md")
    assert is_prompt_line("  /docs:outline\n")
    assert not is_prompt_line("/tools")
    assert not is_prompt_line("/call docs__read {}")
    assert not is_prompt_line("/Users/me: notes")
    assert not is_prompt_line("docs:summarize")


def test_key_value_words_become_arguments_and_quotes_keep_spaces():
    parsed = parse_prompt_line('/docs:summarize path=a.md style="two words" empty=')
    assert parsed == PromptInvocation(
        "docs", "summarize", {"path": "a.md", "style": "two words", "empty": ""}
    )
    assert parsed is not None and parsed.command == "/docs:summarize"
    assert parse_prompt_line("/docs:outline\n") == PromptInvocation("docs", "outline", {})
    assert parse_prompt_line("/docs:summarize\npath=a.md") == PromptInvocation(
        "docs", "summarize", {"path": "a.md"}
    )
    assert parse_prompt_line("just text") is None


@pytest.mark.parametrize(
    "line", ["/docs:summarize a.md", "/docs:summarize path=a path=b", '/docs:summarize path="a']
)
def test_unreadable_arguments_are_refused(line: str):
    with pytest.raises(PromptLineError):
        parse_prompt_line(line)


def test_required_arguments_count_as_missing_when_blank():
    assert missing_required(CONVERT, {}) == ["time", "zone"]
    assert missing_required(CONVERT, {"time": "14:00", "zone": "  "}) == ["zone"]
    assert missing_required(SUMMARIZE, {"path": "a.md"}) == []
    assert filled_arguments({"path": "a.md", "style": " "}) == {"path": "a.md"}
    assert unknown_arguments(SUMMARIZE, {"path": "a", "colour": "red"}) == ["colour"]


def test_a_request_names_the_missing_required_arguments():
    request = read_prompt_request("/time:convert time=14:00", [SUMMARIZE, CONVERT])
    assert request is not None
    assert request.prompt == CONVERT and request.missing == ("zone",)
    assert request.invocation.arguments == {"time": "14:00"}


def test_an_unlisted_prompt_is_left_to_the_sidecar_to_judge():
    request = read_prompt_request("/other:thing x=1", [SUMMARIZE])
    assert request is not None and request.prompt is None and request.missing == ()


def test_an_argument_the_listed_prompt_lacks_is_refused():
    with pytest.raises(PromptLineError):
        read_prompt_request("/docs:summarize path=a colour=red", [SUMMARIZE])
    assert read_prompt_request("/tools", [SUMMARIZE]) is None


def test_an_attached_block_gets_lines_of_its_own():
    block = "<resource>\nx\n</resource>"
    assert insert_block("", 0, block) == (block + "\n", len(block) + 1)
    text, cursor = insert_block("See this", 8, block)
    assert text == f"See this\n{block}\n" and cursor == len(text)
    text, cursor = insert_block("Before\nafter", 7, block)
    assert text == f"Before\n{block}\nafter" and text[cursor:] == "after"
    text, _ = insert_block("one\n\ntwo", 4, block)
    assert text == f"one\n{block}\ntwo"
