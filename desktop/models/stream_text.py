"""Streamed text, without Qt: coalescing appends per frame and cutting finished Markdown blocks.

`AppendBuffer` gathers the text appended to each row between two frames, so the view touches a
document once per frame however many tokens arrived. `BlockSplitter` tells which Markdown blocks
of a streaming message are finished (a blank line outside a code fence or a list ends one), so
each block is rendered once when it ends and only the open block stays plain text. Both are
linear in the text they see.
"""

from __future__ import annotations

import re


class AppendBuffer:
    """Text appended per row since the last `take`, in arrival order of the rows."""

    def __init__(self) -> None:
        self._pending: dict[int, list[str]] = {}

    def __bool__(self) -> bool:
        return bool(self._pending)

    def add(self, row: int, text: str) -> None:
        self._pending.setdefault(row, []).append(text)

    def take(self) -> list[tuple[int, str]]:
        """Everything pending, one joined string per row; the buffer is empty afterwards."""
        pending, self._pending = self._pending, {}
        return [(row, "".join(parts)) for row, parts in pending.items()]

    def clear(self) -> None:
        self._pending = {}


_FENCES = ("```", "~~~")
_LIST_ITEM = re.compile(r" {0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)")
_MARKER_PREFIX = re.compile(r" {0,3}(?:\d{0,9}|\d{1,9}[.)]|[-+*])")


def _continues_list(line: str) -> bool:
    """After a blank line in a list: this line belongs to it (an item or an indented line)."""
    return line[:1].isspace() or _LIST_ITEM.match(line) is not None


class BlockSplitter:
    """Feeds on streamed Markdown; hands out each block once it is finished.

    A blank line outside a code fence ends a block, except in a list: there the block goes on
    while the next line is an item or indented (a loose list is one list, as the whole text
    parses), and ends at the first line that is neither, as soon as its first characters tell.

    `tail` is the open block (its complete lines and the line being written), shown as plain
    text until it ends. `finish` ends the stream and returns the open block.
    """

    def __init__(self) -> None:
        self._lines: list[str] = []
        self._line: list[str] = []
        self._in_fence = False
        self._in_list = False  # the open block holds a list item
        self._held_blank = False  # a blank line in a list: does the list go on after it?

    def feed(self, text: str) -> list[str]:
        """Take more text; return the blocks it finished, in order."""
        finished: list[str] = []
        start = 0
        while (newline := text.find("\n", start)) >= 0:
            self._line.append(text[start:newline])
            start = newline + 1
            line = "".join(self._line)
            self._line = []
            self._take_line(line, finished)
        if start < len(text):
            self._line.append(text[start:])
            if self._held_blank:
                self._decide_partial(finished)
        return finished

    def _take_line(self, line: str, finished: list[str]) -> None:
        stripped = line.strip()
        if self._held_blank and stripped:
            self._held_blank = False
            if _continues_list(line):
                self._lines.append("")
            else:
                self._end_block(finished)
        if stripped.startswith(_FENCES):
            self._in_fence = not self._in_fence
            self._lines.append(line)
            if not self._in_fence and not self._in_list:
                self._end_block(finished)
        elif not stripped and not self._in_fence:
            if self._in_list:
                self._held_blank = True
            elif self._lines:
                self._end_block(finished)
        else:
            if not self._in_fence and _LIST_ITEM.match(line):
                self._in_list = True
            self._lines.append(line)

    def _decide_partial(self, finished: list[str]) -> None:
        """The line being written after a blank line in a list: end the list as soon as its
        first characters show it is neither an item nor indented."""
        partial = "".join(self._line)
        if not partial.strip() or _MARKER_PREFIX.fullmatch(partial):
            return  # not known yet
        self._held_blank = False
        if _continues_list(partial):
            self._lines.append("")
        else:
            self._end_block(finished)

    def _end_block(self, finished: list[str]) -> None:
        if self._lines:
            finished.append("\n".join(self._lines))
        self._lines = []
        self._in_list = False

    @property
    def tail(self) -> str:
        """The open block as written so far."""
        partial = "".join(self._line)
        if not self._lines:
            return partial
        held = [""] if self._held_blank and partial else []
        return "\n".join([*self._lines, *held, partial])

    def finish(self) -> str:
        """End of the message: the open block (maybe empty); the splitter is reset."""
        tail = self.tail
        self._lines, self._line, self._in_fence = [], [], False
        self._in_list = self._held_blank = False
        return tail
