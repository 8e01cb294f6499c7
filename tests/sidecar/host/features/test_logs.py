"""Per-server log buffers: bounded, filtered by level, paged by sequence number."""

from __future__ import annotations

from sidecar.host.features.logs import MAX_TEXT, ServerLogRecord, ServerLogs, as_level, render


def test_a_full_buffer_drops_the_oldest_entries_and_counts_them() -> None:
    logs = ServerLogs(capacity=3)
    for n in range(5):
        logs.add("srv", "info", f"line {n}")
    assert [e.text for e in logs.entries("srv")] == ["line 2", "line 3", "line 4"]
    assert logs.dropped("srv") == 2
    assert logs.entries("other") == [] and logs.dropped("other") == 0


def test_entries_filter_by_level_and_page_by_sequence() -> None:
    logs = ServerLogs()
    for level in ("debug", "info", "error", "info", "critical"):
        logs.add("srv", as_level(level), level)
    assert [e.level for e in logs.entries("srv", min_level="error")] == ["error", "critical"]
    assert [e.seq for e in logs.entries("srv", after_seq=2)] == [3, 4]
    assert [e.seq for e in logs.entries("srv", limit=2)] == [3, 4]


def test_levels_are_remembered_per_server() -> None:
    logs = ServerLogs()
    logs.set_level("a", "warning")
    assert (logs.level("a"), logs.level("b")) == ("warning", None)


def test_unknown_levels_count_as_info_and_data_becomes_bounded_text() -> None:
    assert as_level("loud") == "info"
    assert render({"disk": "low", "free": 3}) == '{"disk": "low", "free": 3}'
    assert len(render("x" * (MAX_TEXT + 50))) == MAX_TEXT + 1


def test_listeners_hear_each_new_entry_until_they_unsubscribe() -> None:
    logs = ServerLogs()
    heard: list[tuple[str, ServerLogRecord]] = []
    stop = logs.subscribe(lambda server, entry: heard.append((server, entry)))
    logs.add("srv", "info", "one")
    stop()
    logs.add("srv", "info", "two")
    assert [(s, e.text) for s, e in heard] == [("srv", "one")]
