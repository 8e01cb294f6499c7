"""The method table: every wire method and notification, each declared in the module of its area.

A method `area/verb` is declared in the module named for its area, beside its params and result
models and its name constant (`thread/list` is `threads.THREAD_LIST`); the lifecycle words
(`initialize`, `ping`, `shutdown`) in `lifecycle`. Areas that are parts of one concept share its
module: `profile/`, `plan/` and `task/` live in `plans`; `server_log/`, `resource/` and `prompt/`
(the servers' MCP features) in `features`.
"""

from __future__ import annotations

from sidecar.protocol.agents import AGENT_METHODS
from sidecar.protocol.automation import AUTOMATION_METHODS, AUTOMATION_NOTIFICATIONS
from sidecar.protocol.events import RUN_EVENT, RunEventParams
from sidecar.protocol.features import FEATURE_METHODS
from sidecar.protocol.grants import GRANT_METHODS
from sidecar.protocol.heartbeat import HEARTBEAT_METHODS
from sidecar.protocol.identity import IDENTITY_METHODS
from sidecar.protocol.lifecycle import LIFECYCLE_METHODS
from sidecar.protocol.memory import MEMORY_METHODS
from sidecar.protocol.methods_base import MethodSpec
from sidecar.protocol.models_base import WireModel
from sidecar.protocol.plans import PLAN_METHODS
from sidecar.protocol.queue import QUEUE_METHODS, QUEUE_NOTIFICATIONS
from sidecar.protocol.routines import ROUTINE_METHODS
from sidecar.protocol.runs import RUN_METHODS
from sidecar.protocol.schedules import SCHEDULE_METHODS
from sidecar.protocol.servers import SERVER_METHODS, SERVER_NOTIFICATIONS
from sidecar.protocol.settings import SETTINGS_METHODS
from sidecar.protocol.skills import SKILL_METHODS
from sidecar.protocol.threads import THREAD_METHODS
from sidecar.protocol.tools import TOOL_METHODS

METHODS: dict[str, MethodSpec] = {
    **LIFECYCLE_METHODS,
    **THREAD_METHODS,
    **RUN_METHODS,
    **TOOL_METHODS,
    **SETTINGS_METHODS,
    **SERVER_METHODS,
    **GRANT_METHODS,
    **FEATURE_METHODS,
    **PLAN_METHODS,
    **ROUTINE_METHODS,
    **SKILL_METHODS,
    **QUEUE_METHODS,
    **SCHEDULE_METHODS,
    **AUTOMATION_METHODS,
    **HEARTBEAT_METHODS,
    **MEMORY_METHODS,
    **IDENTITY_METHODS,
    **AGENT_METHODS,
}

NOTIFICATIONS: dict[str, type[WireModel]] = {
    RUN_EVENT: RunEventParams,
    **SERVER_NOTIFICATIONS,
    **QUEUE_NOTIFICATIONS,
    **AUTOMATION_NOTIFICATIONS,
}
