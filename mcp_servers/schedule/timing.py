"""When a schedule fires: one-shot (an ISO time), interval (seconds) and 5-field cron schedules
in an IANA time zone, as Unix times.

Cron times are wall-clock times of the schedule's zone, so a daily 09:00 stays at 09:00 across
DST changes. On the spring-forward day a time inside the skipped hour fires once, at the moment
the clocks jump (several such times collapse into that one fire); on the fall-back day a time
inside the repeated hour fires once, at its first occurrence. No time is skipped, none doubled.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter  # pyright: ignore[reportMissingTypeStubs]

from .errors import ErrorCode, ScheduleRefusal

KINDS = ("once", "interval", "cron")
MIN_INTERVAL_S = 60
MAX_INTERVAL_S = 366 * 24 * 3600
_INTERVAL = re.compile(r"^\s*(\d+)\s*([smhd]?)\s*$")
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
_MAX_STEPS = 100_000


@dataclass(frozen=True, slots=True)
class Timing:
    kind: str
    spec: str
    zone: ZoneInfo
    anchor: float  # interval: the first fire is anchor + interval

    @property
    def interval(self) -> int:
        return parse_interval(self.spec)


def zone(name: str) -> ZoneInfo:
    """Raises:
    ScheduleRefusal: not an IANA zone name."""
    try:
        if not name or name.startswith(("/", ".")) or ".." in name:
            raise ValueError(name)
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ScheduleRefusal(
            ErrorCode.UNKNOWN_TIMEZONE,
            f"unknown time zone {name!r}: give an IANA name such as 'Europe/Berlin' or 'UTC'",
        ) from exc


def parse_interval(spec: str) -> int:
    """Seconds from '3600', '90m', '2h' or '1d'.

    Raises:
        ScheduleRefusal: not such a value, or outside MIN_INTERVAL_S..MAX_INTERVAL_S.
    """
    match = _INTERVAL.match(spec)
    if match is None:
        raise ScheduleRefusal(
            ErrorCode.BAD_INTERVAL,
            f"bad interval {spec!r}: give seconds, or e.g. '15m', '2h', '1d'",
        )
    seconds = int(match.group(1)) * _UNITS[match.group(2)]
    if not MIN_INTERVAL_S <= seconds <= MAX_INTERVAL_S:
        raise ScheduleRefusal(
            ErrorCode.BAD_INTERVAL,
            f"an interval must be between {MIN_INTERVAL_S} seconds and 366 days, not {spec!r}",
        )
    return seconds


def check_cron(spec: str) -> str:
    """Raises:
    ScheduleRefusal: not a valid 5-field cron expression."""
    text = " ".join(spec.split())
    if len(text.split(" ")) != 5 or not croniter.is_valid(text):  # pyright: ignore[reportUnknownMemberType]
        raise ScheduleRefusal(
            ErrorCode.BAD_CRON,
            f"bad cron expression {spec!r}: give 5 fields 'minute hour day month weekday', "
            "e.g. '0 9 * * 1-5' for weekdays at 09:00",
        )
    return text


def parse_once(spec: str, tz: ZoneInfo) -> float:
    """An ISO 8601 time; without an offset it is a wall-clock time of `tz`.

    Raises:
        ScheduleRefusal: not an ISO time.
    """
    try:
        when = datetime.fromisoformat(spec.strip())
    except ValueError as exc:
        raise ScheduleRefusal(
            ErrorCode.BAD_TIME, f"bad time {spec!r}: give ISO 8601, e.g. '2027-01-31T09:30'"
        ) from exc
    if when.tzinfo is None:
        return wall_instant(when, tz)
    return when.timestamp()


def make_timing(kind: str, spec: str, tz_name: str, *, now: float, anchor: float) -> Timing:
    """Check a schedule's timing as the author gave it.

    Raises:
        ScheduleRefusal: unknown kind or zone, bad spec, a one-shot not in the future.
    """
    tz = zone(tz_name)
    if kind == "once":
        at = parse_once(spec, tz)
        if at <= now:
            raise ScheduleRefusal(
                ErrorCode.IN_THE_PAST,
                f"{spec} ({tz_name}) is in the past; a one-shot schedule must be in the future",
            )
        return Timing(kind, spec.strip(), tz, anchor)
    if kind == "interval":
        parse_interval(spec)
        return Timing(kind, spec.strip(), tz, anchor)
    if kind == "cron":
        return Timing(kind, check_cron(spec), tz, anchor)
    raise ScheduleRefusal(
        ErrorCode.BAD_KIND, f"unknown kind {kind!r}; kinds are {', '.join(KINDS)}"
    )


def wall_instant(naive: datetime, tz: ZoneInfo) -> float:
    """The Unix time of a wall-clock time of `tz`: the first occurrence of a repeated time, and
    for a time the clocks skip, the moment they jump."""
    aware = naive.replace(tzinfo=tz, fold=0)
    if _exists(naive, tz):
        return aware.timestamp()
    probe = naive.replace(second=0, microsecond=0)
    for _ in range(48 * 60):
        probe += timedelta(minutes=1)
        if _exists(probe, tz):
            return probe.replace(tzinfo=tz, fold=0).timestamp()
    return aware.timestamp()


def _exists(naive: datetime, tz: ZoneInfo) -> bool:
    stamp = naive.replace(tzinfo=tz, fold=0).timestamp()
    return datetime.fromtimestamp(stamp, tz).replace(tzinfo=None) == naive


def next_after(timing: Timing, after: float) -> float | None:
    """The first fire time strictly after `after`, or None (a one-shot that is past)."""
    if timing.kind == "once":
        at = parse_once(timing.spec, timing.zone)
        return at if at > after else None
    if timing.kind == "interval":
        step = timing.interval
        if after < timing.anchor:
            return timing.anchor + step
        periods = int((after - timing.anchor) // step) + 1
        return timing.anchor + periods * step
    local = datetime.fromtimestamp(after, timing.zone).replace(tzinfo=None)
    it = croniter(timing.spec, local)
    for _ in range(_MAX_STEPS):
        candidate: datetime = it.get_next(datetime)  # pyright: ignore[reportUnknownMemberType]
        instant = wall_instant(candidate, timing.zone)
        if instant > after:
            return instant
    return None


def fires_between(timing: Timing, after: float, until: float, limit: int = 10_000) -> list[float]:
    """Fire times in (after, until], at most `limit` of them (the earliest)."""
    out: list[float] = []
    cursor = after
    while len(out) < limit:
        nxt = next_after(timing, cursor)
        if nxt is None or nxt > until:
            break
        out.append(nxt)
        cursor = nxt
    return out


def upcoming(timing: Timing, after: float, count: int = 3) -> list[str]:
    """The next `count` fire times as ISO text in the schedule's zone."""
    out: list[str] = []
    cursor = after
    for _ in range(count):
        nxt = next_after(timing, cursor)
        if nxt is None:
            break
        out.append(datetime.fromtimestamp(nxt, timing.zone).isoformat(timespec="minutes"))
        cursor = nxt
    return out


def local_iso(stamp: float, tz: ZoneInfo) -> str:
    return datetime.fromtimestamp(stamp, tz).isoformat(timespec="minutes")


def utc_iso(stamp: float) -> str:
    return datetime.fromtimestamp(stamp, UTC).isoformat(timespec="seconds")


def local_zone_name() -> str:
    """The system's IANA zone name ($TZ, /etc/localtime), else UTC."""
    env = os.environ.get("TZ", "").lstrip(":")
    if env:
        return env
    try:
        target = os.readlink("/etc/localtime")
    except OSError:
        return "UTC"
    marker = "zoneinfo/"
    return target.split(marker, 1)[1] if marker in target else "UTC"
