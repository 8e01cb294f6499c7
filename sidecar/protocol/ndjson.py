"""Incremental NDJSON line splitting: byte chunks in, complete lines out (stdlib only).

One splitter for every newline-delimited JSON stream Atrium reads (the sidecar's stdin, the
window's reader of the sidecar's stdout). It is push-based, so it serves an asyncio reader and a
Qt `readyRead` slot alike:

    splitter = LineSplitter()
    for item in splitter.feed(chunk):      # as chunks arrive
        ...
    for item in splitter.finish():         # at EOF: the last line may lack its newline
        ...

Each item is a line's bytes (without the newline and a trailing carriage return) or a
`LineTooLongError` standing in the place of a line longer than `max_line_bytes`; the bytes of that
line are discarded up to its newline and splitting goes on with the next line. Blank lines are
skipped. Every byte is searched for a newline once and a pending partial line is never copied
per chunk, so a multi-megabyte line arriving in small chunks costs O(n), not O(n²), and memory
never exceeds `max_line_bytes` plus one chunk.
"""

from __future__ import annotations

DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024


class LineTooLongError(ValueError):
    """A line exceeded the splitter's `max_line_bytes`; its bytes were discarded up to its newline.

    `size` is the number of bytes seen of it when it was refused (at least `max_line_bytes + 1`).
    """

    def __init__(self, max_line_bytes: int, size: int) -> None:
        super().__init__(f"line longer than {max_line_bytes} bytes (at least {size} bytes)")
        self.max_line_bytes = max_line_bytes
        self.size = size


class LineSplitter:
    """Splits a byte stream into lines; see the module docstring."""

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        if max_line_bytes < 1:
            raise ValueError("max_line_bytes must be positive")
        self.max_line_bytes = max_line_bytes
        self._buffer = bytearray()  # the partial line after the last newline seen
        self._skipping = False  # inside an oversized line: drop bytes up to its newline

    @property
    def pending(self) -> int:
        """Bytes held of an unfinished line."""
        return len(self._buffer)

    def feed(self, chunk: bytes | bytearray | memoryview) -> list[bytes | LineTooLongError]:
        """Take the next chunk; return the lines it completed, in order."""
        out: list[bytes | LineTooLongError] = []
        data = bytes(chunk)
        start = 0
        limit = self.max_line_bytes
        while (newline := data.find(b"\n", start)) >= 0:
            if self._skipping:
                self._skipping = False
            elif self._buffer:
                self._buffer += data[start:newline]
                self._emit(bytes(self._buffer), out)
                self._buffer.clear()
            else:
                self._emit(data[start:newline], out)
            start = newline + 1
        if start < len(data) and not self._skipping:
            self._buffer += data[start:]
            if len(self._buffer) > limit + 1:  # + 1: the line's CR may still be in there
                out.append(LineTooLongError(limit, len(self._buffer)))
                self._buffer.clear()
                self._skipping = True
        return out

    def finish(self) -> list[bytes | LineTooLongError]:
        """End of stream: return the final line if it had no newline; the splitter is reset."""
        out: list[bytes | LineTooLongError] = []
        if self._buffer and not self._skipping:
            self._emit(bytes(self._buffer), out)
        self._buffer.clear()
        self._skipping = False
        return out

    def _emit(self, line: bytes, out: list[bytes | LineTooLongError]) -> None:
        if line.endswith(b"\r"):
            line = line[:-1]
        if len(line) > self.max_line_bytes:
            out.append(LineTooLongError(self.max_line_bytes, len(line)))
        elif line and not line.isspace():
            out.append(line)
