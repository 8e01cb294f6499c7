"""`FindResults`: Find counts and steps through matches, from the end of the thread up."""

from __future__ import annotations

import pytest

from desktop.models.find import FindMatch, FindResults
from sidecar.protocol import SearchHit


def _hit(message_id: str, matches: int) -> SearchHit:
    return SearchHit(
        message_id=message_id, seq=1, role="user", snippet="", created_at=0.0, matches=matches
    )


def test_matches_are_counted_and_numbered_from_the_newest_messages_last_match_up():
    newest, apart, oldest = _hit("m3", 3), _hit("m2", 0), _hit("m1", 2)
    results = FindResults("river", (newest, apart, oldest), has_more=True)
    assert (len(results), results.count_text()) == (5, "5+")
    assert [results.at(n) for n in range(5)] == [
        FindMatch(newest, 2),
        FindMatch(newest, 1),
        FindMatch(newest, 0),
        FindMatch(oldest, 1),
        FindMatch(oldest, 0),
    ]
    assert results.hits == (newest, oldest)  # a message with the words apart has no match
    with pytest.raises(IndexError):
        results.at(5)


def test_no_hits_is_no_matches():
    results = FindResults("river", (_hit("m1", 0),))
    assert (bool(results), results.count_text()) == (False, "0")
