"""Slash commands of the composer as plain Python (no Qt): completions, prompt lines, arguments.

The composer offers the sidecar's direct commands (`/tools`, `/call`, `/delegate`, `/plan`) and
every MCP prompt of every connected server as `/<server>:<prompt>`. A prompt line may carry
arguments as `key=value` words (`key="two words"` quotes a value with spaces). Nothing here sends
anything: the composer decides from these results whether to ask for arguments, call
`prompt/get`, or send the text as a message.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from sidecar.protocol import PromptInfo


@dataclass(frozen=True, slots=True)
class CommandChoice:
    """One line of the completion popup: the command to insert and what it does.

    `prompt` is set for MCP prompts and None for the sidecar's built-in direct commands.
    """

    command: str
    description: str
    prompt: PromptInfo | None = None


BUILTIN_COMMANDS: tuple[CommandChoice, ...] = (
    CommandChoice("/tools", "List the tools of every connected server"),
    CommandChoice("/call", "Run one tool: /call <server>__<tool> {json arguments}"),
    CommandChoice("/delegate", "Hand a task to a subagent or a strong agent"),
    CommandChoice("/plan", "Turn a goal into a plan of tasks to approve"),
)

_PROMPT_HEAD = re.compile(r"^/(?P<server>[A-Za-z0-9][A-Za-z0-9_-]*):(?P<name>\S+)$")
_ARGUMENT_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")


class PromptLineError(ValueError):
    """A `/<server>:<prompt>` line whose arguments cannot be read; the message says why."""


@dataclass(frozen=True, slots=True)
class PromptInvocation:
    """A parsed `/<server>:<prompt> key=value ...` line."""

    server: str
    name: str
    arguments: dict[str, str]

    @property
    def command(self) -> str:
        return f"/{self.server}:{self.name}"


def choices_for(prompts: Iterable[PromptInfo]) -> list[CommandChoice]:
    """The built-in commands, then every prompt (by server, then name) with its description."""
    ordered = sorted(prompts, key=lambda p: (p.server, p.name))
    return [*BUILTIN_COMMANDS, *(_prompt_choice(p) for p in ordered)]


def _prompt_choice(prompt: PromptInfo) -> CommandChoice:
    description = prompt.description or prompt.title or ""
    return CommandChoice(prompt.command, description, prompt)


def completion_prefix(text: str) -> str | None:
    """The slash word being typed, when the whole draft is one (`/`, `/wo`, `/docs:sum`).

    None once the draft has a space or a line break, or does not start with `/`: the popup
    offers commands only while the author is still typing the command itself.
    """
    if not text.startswith("/") or any(ch.isspace() for ch in text):
        return None
    return text


def match_completions(choices: Iterable[CommandChoice], typed: str) -> list[CommandChoice]:
    """Choices whose command starts with `typed` (case-insensitive), then those containing it
    elsewhere, so `/sum` also finds `/docs:summarize`. Order within each group is kept."""
    needle = typed.lower()
    bare = needle.removeprefix("/")
    starts: list[CommandChoice] = []
    contains: list[CommandChoice] = []
    for choice in choices:
        command = choice.command.lower()
        if command.startswith(needle):
            starts.append(choice)
        elif bare and bare in command:
            contains.append(choice)
    return starts + contains


def is_prompt_line(text: str) -> bool:
    """True when the draft's first word is a `/<server>:<prompt>` command."""
    head = text.strip().split(maxsplit=1)
    return bool(head) and _PROMPT_HEAD.match(head[0]) is not None


def parse_prompt_line(text: str) -> PromptInvocation | None:
    """Read `/<server>:<prompt> key=value ...`; None when the draft is not a prompt line.

    Raises:
        PromptLineError: a word is not `key=value`, a key repeats, or a quote is unclosed.
    """
    parts = text.split(maxsplit=1)
    found = _PROMPT_HEAD.match(parts[0]) if parts else None
    if found is None:
        return None
    words = _split_words(parts[1]) if len(parts) > 1 else []
    arguments: dict[str, str] = {}
    for word in words:
        key, equals, value = word.partition("=")
        if not equals or not _ARGUMENT_KEY.match(key):
            raise PromptLineError(f"{word!r} is not key=value")
        if key in arguments:
            raise PromptLineError(f"argument {key!r} is given twice")
        arguments[key] = value
    return PromptInvocation(found["server"], found["name"], arguments)


def _split_words(text: str) -> list[str]:
    try:
        return shlex.split(text, posix=True)
    except ValueError as exc:
        raise PromptLineError(f"cannot read the arguments ({exc})") from exc


def find_prompt(prompts: Iterable[PromptInfo], server: str, name: str) -> PromptInfo | None:
    """The listed prompt `name` of `server`, if the last `prompt/list` had it."""
    for prompt in prompts:
        if prompt.server == server and prompt.name == name:
            return prompt
    return None


def filled_arguments(values: Mapping[str, str]) -> dict[str, str]:
    """The arguments worth sending: blank values are left out (the server sees them unset)."""
    return {key: value for key, value in values.items() if value.strip()}


def missing_required(prompt: PromptInfo, values: Mapping[str, str]) -> list[str]:
    """Names of the prompt's required arguments that are absent or blank, in declared order."""
    filled = filled_arguments(values)
    return [arg.name for arg in prompt.arguments if arg.required and arg.name not in filled]


def unknown_arguments(prompt: PromptInfo, values: Mapping[str, str]) -> list[str]:
    """Keys given that the prompt does not declare, in the order given."""
    declared = {arg.name for arg in prompt.arguments}
    return [key for key in values if key not in declared]


@dataclass(frozen=True, slots=True)
class PromptRequest:
    """What a prompt line asks for. `prompt` is the listed prompt (None when the last
    `prompt/list` did not have it: the sidecar then judges the arguments); `missing` names the
    required arguments still to ask for, so a non-empty `missing` means: open the dialog."""

    invocation: PromptInvocation
    prompt: PromptInfo | None
    missing: tuple[str, ...]


def read_prompt_request(text: str, prompts: Iterable[PromptInfo]) -> PromptRequest | None:
    """Parse a prompt line and check it against the listed prompt; None if not a prompt line.

    Raises:
        PromptLineError: the arguments cannot be read, or name arguments the prompt lacks.
    """
    invocation = parse_prompt_line(text)
    if invocation is None:
        return None
    prompt = find_prompt(prompts, invocation.server, invocation.name)
    if prompt is None:
        return PromptRequest(invocation, None, ())
    unknown = unknown_arguments(prompt, invocation.arguments)
    if unknown:
        raise PromptLineError(f"{invocation.command} takes no argument {', '.join(unknown)}")
    return PromptRequest(invocation, prompt, tuple(missing_required(prompt, invocation.arguments)))


def insert_block(draft: str, position: int, block: str) -> tuple[str, int]:
    """Put `block` into `draft` at `position` on lines of its own; returns the new draft and
    the position just after the block (where the author's cursor goes)."""
    position = max(0, min(position, len(draft)))
    before, after = draft[:position], draft[position:]
    lead = "\n" if before and not before.endswith("\n") else ""
    trail = "\n" if not after.startswith("\n") else ""
    inserted = f"{lead}{block}{trail}"
    return before + inserted + after, len(before) + len(inserted)
