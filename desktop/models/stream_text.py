"""Streamed text, without Qt: coalescing appends per frame and cutting finished Markdown blocks.

`AppendBuffer` gathers the text appended to each row between two frames, so the view touches a
document once per frame however many tokens arrived. `BlockSplitter` tells which Markdown blocks
of a streaming message are finished (a blank line outside a code fence ends one), so each block
is rendered once when it ends and only the open block stays plain text. Both are linear in the
text they see.
"""

from __future__ import annotations


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


class BlockSplitter:
    """Feeds on streamed Markdown; hands out each block once it is finished.

    `tail` is the open block (its complete lines and the line being written), shown as plain
    text until it ends. `finish` ends the stream and returns the open block.
    """

    def __init__(self) -> None:
        self._lines: list[str] = []
        self._line: list[str] = []
        self._in_fence = False

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
        return finished

    def _take_line(self, line: str, finished: list[str]) -> None:
        stripped = line.strip()
        if stripped.startswith(_FENCES):
            self._in_fence = not self._in_fence
            self._lines.append(line)
            if not self._in_fence:
                finished.append("\n".join(self._lines))
                self._lines = []
        elif not stripped and not self._in_fence:
            if self._lines:
                finished.append("\n".join(self._lines))
                self._lines = []
        else:
            self._lines.append(line)

    @property
    def tail(self) -> str:
        """The open block as written so far."""
        return (
            "\n".join([*self._lines, "".join(self._line)]) if self._lines else "".join(self._line)
        )

    def finish(self) -> str:
        """End of the message: the open block (maybe empty); the splitter is reset."""
        tail = self.tail
        self._lines, self._line, self._in_fence = [], [], False
        return tail
