"""Permission policy for one call: run at once, or ask the author first."""

from __future__ import annotations

from typing import Literal

from sidecar.host.types import HostTool

Verdict = Literal["allow", "ask"]


def decide(tool: HostTool, *, thread_granted: bool, drifted: bool = False) -> Verdict:
    """Read-only tools of trusted servers run at once; anything else needs a grant or the author.

    Annotations are hints from the server, so an untrusted server's `readOnlyHint` counts for
    nothing. A tool whose definition changed since the author approved it (`drifted`) always
    asks: neither its annotations nor an earlier grant cover the new definition.
    """
    if drifted:
        return "ask"
    if tool.read_only and tool.trusted:
        return "allow"
    if thread_granted:
        return "allow"
    return "ask"
