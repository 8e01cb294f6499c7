"""A check of a task's result against its acceptance criteria, as the run tree sees it.

Not a run event of its own: it arrives as the `event` of a `subagent_event` (its `type` is
`check`), once with verdict `running` when the check starts and once with `pass` or `fail`.
A task's `success_criteria` starting with `run:` are checked by running the rest (Python) in the
sandbox (`method` `command`); any other criteria by a verifier subagent (`method` `model`).
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from pydantic import Field

from sidecar.protocol.models_base import WireModel

CheckVerdict: TypeAlias = Literal["running", "pass", "fail"]
CheckMethod: TypeAlias = Literal["model", "command"]


class TaskCheck(WireModel):
    type: Literal["check"] = "check"
    attempt: int = Field(description="The attempt whose result is checked.")
    method: CheckMethod
    verdict: CheckVerdict
    reasons: str = Field(default="", description="Why it passed or failed (the verifier's words).")
    criteria: str = ""
