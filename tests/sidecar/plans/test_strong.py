"""A strong agent's failure is classed by its normalized error code: what no retry can mend
(not installed, not signed in, misconfigured, its model unreachable) is hopeless, a rate limit
waits, the rest is transient."""

from __future__ import annotations

import pytest

from sidecar.plans.strong import failure_class


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("cli_not_found", "hopeless"),
        ("auth_failed", "hopeless"),
        ("configuration", "hopeless"),
        ("model_unreachable", "hopeless"),
        ("rate_limited", "rate_limited"),
        ("process_exited", "transient"),
        ("timeout", "transient"),
        ("api_error", "transient"),
        ("", "transient"),
    ],
)
def test_each_error_code_has_its_class(code: str, expected: str) -> None:
    assert failure_class(code) == expected
