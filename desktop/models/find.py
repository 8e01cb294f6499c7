"""Find in a thread, without Qt: the matches of one search and where each of them is.

`thread/search` answers with the messages that match, newest first, each with how often the
query occurs in it (`SearchHit.matches`, counted by `sidecar.protocol.find_pattern`). Find counts
and steps through those matches, not the messages: the first is the one nearest the end of the
thread (the newest message's last), the next is the one above it, and so on up the thread.
"""

from __future__ import annotations

from dataclasses import dataclass

from sidecar.protocol import SearchHit


@dataclass(frozen=True, slots=True)
class FindMatch:
    """One match: its message and which of the message's matches it is (0 is the first in
    reading order)."""

    hit: SearchHit
    occurrence: int


class FindResults:
    """The matches of one search, numbered from the end of the thread up."""

    def __init__(self, query: str, hits: tuple[SearchHit, ...], has_more: bool = False) -> None:
        self.query = query
        self.hits = tuple(hit for hit in hits if hit.matches > 0)
        self.has_more = has_more
        self.total = sum(hit.matches for hit in self.hits)

    def __len__(self) -> int:
        return self.total

    def at(self, position: int) -> FindMatch:
        """The match at `position` (0: the newest message's last match).

        Raises:
            IndexError: `position` is not below `total`.
        """
        if not 0 <= position < self.total:
            raise IndexError(position)
        for hit in self.hits:
            if position < hit.matches:
                return FindMatch(hit, hit.matches - 1 - position)
            position -= hit.matches
        raise IndexError(position)  # unreachable: `total` is the sum of the matches

    def count_text(self) -> str:
        """How many matches, for the find bar ("120", or "200+" when more messages match)."""
        return f"{self.total}{'+' if self.has_more else ''}"
