"""Refusals of the schedule server, each with a short stable code."""

from __future__ import annotations

from enum import StrEnum


class ErrorCode(StrEnum):
    BAD_CRON = "bad_cron"
    BAD_TIME = "bad_time"
    IN_THE_PAST = "in_the_past"
    BAD_INTERVAL = "bad_interval"
    UNKNOWN_TIMEZONE = "unknown_timezone"
    PROMPT_TOO_LONG = "prompt_too_long"
    NO_SUCH_THREAD = "no_such_thread"
    NO_SUCH_SCHEDULE = "no_such_schedule"
    BAD_KIND = "bad_kind"
    BAD_POLICY = "bad_policy"
    BAD_UNATTENDED = "bad_unattended"
    TOO_MANY = "too_many"


class ScheduleRefusal(Exception):
    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(f"[{code}] {message}")
        self.code = code
        self.message = message
