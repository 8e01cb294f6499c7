"""How the sidecar process ends when it will not serve: what both ends agree on besides frames.

A sidecar that refuses to start (the database was written by a newer Atrium, another sidecar
owns the data folder) writes one line `atrium: refused: <reason>` to stderr and exits with
`EXIT_REFUSED`. The desktop shows the reason and does not restart it: trying again cannot help.
"""

from __future__ import annotations

EXIT_REFUSED = 78
"""EX_CONFIG from sysexits.h: the set-up, not the program, is wrong."""

REFUSED_PREFIX = "atrium: refused: "


def refusal_reason(stderr_tail: str) -> str | None:
    """The reason in the last refusal line of `stderr_tail`, if there is one."""
    for line in reversed(stderr_tail.splitlines()):
        if line.startswith(REFUSED_PREFIX):
            return line[len(REFUSED_PREFIX) :].strip()
    return None
