"""What the author sees of a streamed answer equals the parsed answer: CRLF as LF, no field
marker, no surrounding whitespace, however the listener cuts the text."""

from __future__ import annotations

import pytest

from sidecar.llm._step import AnswerStream

ANSWER = "Grüße 😀 日本語\r\nline two [1] and [[link]]\r\n\r\nthe end"
TAIL = "\n\n[[ ## completed ## ]]\n"


def _shown(text: str, step: int) -> str:
    guard = AnswerStream()
    return "".join(guard.push(text[i : i + step]) for i in range(0, len(text), step))


@pytest.mark.parametrize("step", [1, 2, 3, 5, 8, 1000])
def test_the_shown_text_is_a_prefix_of_the_parsed_answer_and_never_a_marker(step: int) -> None:
    parsed = ANSWER.replace("\r\n", "\n")
    shown = _shown(ANSWER + TAIL, step)
    assert parsed.startswith(shown)
    assert "[[ ##" not in shown
    assert shown == parsed  # only "the end"'s trailing nothing is held here


def test_trailing_whitespace_is_held_until_more_text_comes() -> None:
    guard = AnswerStream()
    assert guard.push("one ") == "one"
    assert guard.push("\n") == ""
    assert guard.push("two") == " \ntwo"


def test_a_crlf_split_across_chunks_becomes_one_lf() -> None:
    guard = AnswerStream()
    assert guard.push("a\r") == "a"
    assert guard.push("\nb") == "\nb"


def test_a_lone_bracket_is_shown_once_it_cannot_start_a_marker() -> None:
    guard = AnswerStream()
    assert guard.push("see [") == "see"
    assert guard.push("1]") == " [1]"


def test_nothing_is_shown_after_a_marker() -> None:
    guard = AnswerStream()
    assert guard.push("done\n\n[[ ## tool_calls ## ]]\n{}") == "done"
    assert guard.push("more text") == ""
