"""Fire times in local wall-clock time, across both DST changes of two zones."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from mcp_servers.schedule.errors import ErrorCode, ScheduleRefusal
from mcp_servers.schedule.timing import fires_between, local_iso, make_timing, next_after


def _local(stamp: float, zone: str) -> str:
    return local_iso(stamp, ZoneInfo(zone))


def _at(zone: str, *parts: int) -> float:
    return datetime(*parts, tzinfo=ZoneInfo(zone)).timestamp()  # type: ignore[misc]


@pytest.mark.parametrize(
    ("zone", "spring", "autumn"),
    [
        ("Europe/Berlin", (2026, 3, 29), (2026, 10, 25)),
        ("America/New_York", (2026, 3, 8), (2026, 11, 1)),
    ],
)
def test_a_daily_0230_job_runs_exactly_once_on_both_transition_days(
    zone: str, spring: tuple[int, int, int], autumn: tuple[int, int, int]
):
    timing = make_timing("cron", "30 2 * * *", zone, now=0, anchor=0)
    for day in (spring, autumn):
        start = _at(zone, *day, 0, 0) - 86400
        fires = [_local(t, zone) for t in fires_between(timing, start, start + 3 * 86400)]
        on_the_day = [f for f in fires if f.startswith("{:04d}-{:02d}-{:02d}".format(*day))]
        assert len(fires) == 3 and len(on_the_day) == 1
    # Spring forward: 02:30 does not exist; it fires when the clocks jump to 03:00.
    start = _at(zone, *spring, 0, 0)
    assert _local(next_after(timing, start) or 0, zone).endswith(
        "T03:00" + ("+02:00" if zone == "Europe/Berlin" else "-04:00")
    )
    # Fall back: in Berlin 02:30 comes twice and fires at its first occurrence only, so the
    # next fire is 25 hours later; in New York 02:30 comes after the repeated hour.
    start = _at(zone, *autumn, 0, 0)
    first = next_after(timing, start) or 0
    assert _local(first, zone).startswith("{:04d}-{:02d}-{:02d}T02:30".format(*autumn))
    hours = 25 if zone == "Europe/Berlin" else 24
    assert next_after(timing, first) == pytest.approx(first + hours * 3600)


def test_every_half_hour_across_fall_back_in_new_york_never_runs_a_wall_time_twice():
    zone = "America/New_York"
    timing = make_timing("cron", "*/30 * * * *", zone, now=0, anchor=0)
    start = _at(zone, 2026, 11, 1, 0, 10)
    fires = [_local(t, zone) for t in fires_between(timing, start, start + 4 * 3600)]
    walls = [f[11:16] for f in fires]
    assert walls == ["00:30", "01:00", "01:30", "02:00", "02:30", "03:00"]


def test_every_quarter_hour_in_the_skipped_berlin_hour_collapses_into_one_fire_at_the_jump():
    zone = "Europe/Berlin"
    timing = make_timing("cron", "*/15 * * * *", zone, now=0, anchor=0)
    start = _at(zone, 2026, 3, 29, 1, 40)
    fires = [_local(t, zone) for t in fires_between(timing, start, start + 3600)]
    assert fires == [
        "2026-03-29T01:45+01:00",
        "2026-03-29T03:00+02:00",
        "2026-03-29T03:15+02:00",
        "2026-03-29T03:30+02:00",
    ]


def test_a_one_shot_without_an_offset_is_a_wall_time_of_its_zone():
    timing = make_timing("once", "2030-07-01T09:00", "Asia/Tokyo", now=0, anchor=0)
    assert _local(next_after(timing, 0) or 0, "UTC") == "2030-07-01T00:00+00:00"
    assert next_after(timing, _at("UTC", 2031, 1, 1)) is None


def test_an_interval_counts_from_its_anchor():
    timing = make_timing("interval", "15m", "UTC", now=1000, anchor=1000)
    assert next_after(timing, 1000) == 1900
    assert next_after(timing, 1900) == 2800
    assert fires_between(timing, 1000, 1000 + 3600) == [1900, 2800, 3700, 4600]


@pytest.mark.parametrize(
    ("kind", "spec", "zone", "code"),
    [
        ("cron", "61 * * * *", "UTC", ErrorCode.BAD_CRON),
        ("cron", "0 9 * *", "UTC", ErrorCode.BAD_CRON),
        ("cron", "0 9 * * * *", "UTC", ErrorCode.BAD_CRON),
        ("cron", "0 9 * * *", "Mars/Olympus", ErrorCode.UNKNOWN_TIMEZONE),
        ("cron", "0 9 * * *", "../../etc/passwd", ErrorCode.UNKNOWN_TIMEZONE),
        ("once", "2001-01-01T00:00", "UTC", ErrorCode.IN_THE_PAST),
        ("once", "next tuesday", "UTC", ErrorCode.BAD_TIME),
        ("interval", "0", "UTC", ErrorCode.BAD_INTERVAL),
        ("interval", "5s", "UTC", ErrorCode.BAD_INTERVAL),
        ("interval", "-1", "UTC", ErrorCode.BAD_INTERVAL),
        ("weekly", "x", "UTC", ErrorCode.BAD_KIND),
    ],
)
def test_bad_timing_is_refused_with_a_code_that_says_why(
    kind: str, spec: str, zone: str, code: ErrorCode
):
    with pytest.raises(ScheduleRefusal) as refused:
        make_timing(kind, spec, zone, now=1_800_000_000, anchor=0)
    assert refused.value.code == code
