"""Which messages a running Claude Code has taken, from its echoes (`--replay-user-messages`).

The echo order follows what Claude Code 2.1.197 printed for a prompt and three messages written
during the first turn: the prompt's echo, then after the first result one echo per message
taken, the last of the batch carrying the joined text.
"""

from __future__ import annotations

import json

from mcp_servers.agents.controllers.claude_turns import TurnLedger
from mcp_servers.agents.events import StateHint
from mcp_servers.agents.parsers import ClaudeStreamParser


def echo(message_id: str | None, text: str = "x") -> str:
    line = {
        "type": "user",
        "message": {"role": "user", "content": text},
        "session_id": "s",
        "parent_tool_use_id": None,
        "uuid": message_id,
        "isReplay": True,
    }
    return json.dumps(line)


def test_an_echo_is_a_message_taken_hint_not_a_tool_result() -> None:
    parser = ClaudeStreamParser()

    step = parser.feed(echo("m-1", "also check the tests"))

    assert step.events == [StateHint(hint="message_taken", detail={"message_id": "m-1"})]
    assert parser.replayed == ["m-1"]


def test_messages_written_after_the_prompt_wait_until_echoed() -> None:
    ledger = TurnLedger("prompt")
    ledger.written("a")
    ledger.written("b")
    ledger.written("c")

    ledger.take_echoes(["prompt"])
    assert ledger.waiting == 3
    ledger.take_echoes(["prompt", "a", "b"])
    assert ledger.waiting == 1
    ledger.take_echoes(["prompt", "a", "b", "c"])  # the batch's last echo (joined text)
    assert ledger.waiting == 0


def test_an_echo_settles_its_message_and_every_one_written_before_it() -> None:
    ledger = TurnLedger("prompt")
    for message_id in ("a", "b", "c"):
        ledger.written(message_id)

    ledger.take_echoes(["b"])

    assert ledger.waiting == 1
    ledger.take_echoes(["b", "b"])  # an echo seen again settles nothing more
    assert ledger.waiting == 1


def test_an_echo_the_ledger_cannot_match_settles_the_oldest_message() -> None:
    ledger = TurnLedger("prompt")
    ledger.written("a")
    ledger.written("b")

    ledger.take_echoes([None, "rewritten-by-the-cli"])

    assert ledger.waiting == 0


def test_a_message_that_never_reached_the_cli_is_not_waited_for() -> None:
    ledger = TurnLedger("prompt")
    ledger.written("a")

    ledger.withdraw("a")

    assert ledger.waiting == 0
