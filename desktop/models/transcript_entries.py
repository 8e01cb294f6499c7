"""The rows of a transcript: messages (the streaming answer among them), the reports of
delegated plans, compact tool calls, notices of turns that ended badly, and the marks put in
between them (`transcript_marks`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from desktop.models.transcript_marks import MarkEntry
from sidecar.protocol import ANNOUNCEMENT_PREFIX

ToolCallState: TypeAlias = Literal["pending", "awaiting_approval", "succeeded", "failed"]


@dataclass
class MessageEntry:
    """An author or agent message. `streaming` while tokens still arrive; `local` for the
    author's own message until the sidecar echoes it back with an id; `seq` its place in the
    thread when known (messages from `thread/messages`).

    Streamed text is kept as chunks and joined only when `text` is read through the transcript
    (`Transcript.entry`/`entries`), so a long answer costs linear time, not quadratic."""

    role: Literal["user", "assistant"]
    text: str
    message_id: str | None = None
    streaming: bool = False
    local: bool = False
    seq: int | None = field(default=None, compare=False)
    chunks: list[str] = field(default_factory=list, compare=False, repr=False)
    chunk_chars: int = field(default=0, compare=False, repr=False)
    rewritten: bool = field(default=False, compare=False, repr=False)
    """The final message replaced the streamed text with different text."""

    def append(self, text: str) -> None:
        self.chunks.append(text)
        self.chunk_chars += len(text)

    @property
    def length(self) -> int:
        """Characters of text, appended chunks included (without joining them)."""
        return len(self.text) + self.chunk_chars

    def settle(self) -> MessageEntry:
        """Join the appended chunks into `text`."""
        if self.chunks:
            self.text = self.text + "".join(self.chunks)
            self.chunks.clear()
            self.chunk_chars = 0
        return self


_ANNOUNCED = re.compile(
    "^" + re.escape(ANNOUNCEMENT_PREFIX) + r"(?P<plan>\S+) ended: (?P<status>[A-Za-z_]+)\]$",
    re.MULTILINE,
)


_GOAL = re.compile(r"^Goal: (?P<goal>.+)$", re.MULTILINE)


@dataclass(frozen=True)
class AnnouncedPlan:
    """One plan's part of an announcement: the plan, how it ended, and its report."""

    plan_id: str
    status: str
    report: str

    @property
    def goal(self) -> str | None:
        """The plan's goal, from its report's `Goal:` line (older reports have none)."""
        found = _GOAL.search(self.report)
        return found["goal"].strip() if found else None

    @property
    def name(self) -> str:
        """How the author knows the plan: its goal, quoted; its id only when no goal is known."""
        goal = self.goal
        return f"“{goal}”" if goal else self.plan_id

    @property
    def header(self) -> str:
        return f"Plan {self.name} finished: {self.status}"


def parse_announcement(content: str) -> tuple[AnnouncedPlan, ...]:
    """The plans an announcement reports, in order (several plans that end close together are
    delivered as one message, each part under its own header line)."""
    found = list(_ANNOUNCED.finditer(content))
    plans: list[AnnouncedPlan] = []
    for i, match in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(content)
        report = content[match.end() : end].strip()
        plans.append(AnnouncedPlan(match["plan"], match["status"], report))
    return tuple(plans)


def announced_header(plans: tuple[AnnouncedPlan, ...]) -> str:
    """One line for an announcement of `plans`."""
    if len(plans) == 1:
        return plans[0].header
    if not plans:
        return "A delegated plan finished"
    ended = ", ".join(f"{plan.name} {plan.status}" for plan in plans)
    return f"{len(plans)} plans finished: {ended}"


@dataclass
class AnnouncementEntry(MessageEntry):
    """A delegated plan's report, delivered into the thread by itself (not typed by the
    author): a `user` message of the thread (`MessageInfo.announcement`), shown as its own kind
    of row, "Plan <id> finished: <status>" with the report under it. `text` keeps the message
    as sent (the model's prompt held exactly that)."""

    plans: tuple[AnnouncedPlan, ...] = ()

    @property
    def header(self) -> str:
        """One line for the whole row."""
        return announced_header(self.plans)


def announcement_entry(
    text: str, message_id: str | None = None, *, local: bool = False
) -> AnnouncementEntry:
    """The row of an announcement: a stored message (with its id), or one just delivered from
    the queue (`local` until the thread is read back)."""
    return AnnouncementEntry("user", text, message_id, local=local, plans=parse_announcement(text))


@dataclass
class ToolCallEntry:
    """One tool call, shown as a single line that expands to its arguments and result."""

    call_id: str
    server: str
    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)
    state: ToolCallState = "pending"
    result: str | None = None
    progress: float | None = None
    total: float | None = None
    progress_message: str | None = None
    result_message_id: str | None = field(default=None, compare=False)


@dataclass
class NoticeEntry:
    """A turn that ended badly: failed (with the error) or cancelled."""

    kind: Literal["failed", "cancelled"]
    text: str


TranscriptEntry: TypeAlias = MessageEntry | ToolCallEntry | NoticeEntry | MarkEntry
