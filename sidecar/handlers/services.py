"""What handlers work with, assembled by the composition root."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sidecar.host.features.client import HostFeatures
from sidecar.host.host import ToolHost
from sidecar.model_key import ModelKey
from sidecar.plans.coordinator import Coordinator
from sidecar.plans.profiles import ProfilesFile
from sidecar.runtime.automation import Automation
from sidecar.runtime.automation_settings import AutomationSettings
from sidecar.runtime.queueing import QueueDesk
from sidecar.runtime.runs import RunManager
from sidecar.runtime.team import TeamDesk
from sidecar.settings import SettingsFile
from sidecar.store import Store

if TYPE_CHECKING:
    from sidecar.context.parts import MemoryDeps


@dataclass(slots=True)
class Services:
    """Every part a handler may use, each present: the composition root (`sidecar.app`) builds
    them all, so a handler has one path per method."""

    store: Store
    runs: RunManager
    host: ToolHost
    settings: SettingsFile
    model_key: ModelKey
    data_dir: Path
    version: str
    model_configured: Callable[[], bool]
    workspace_changed: Callable[[Path], Awaitable[None]]
    warm_up: Callable[[], None]
    features: HostFeatures
    profiles: ProfilesFile
    queue: QueueDesk
    # The memory parts, built on first use (start-up does not import LangGraph's store).
    memory: Callable[[], Awaitable[MemoryDeps]]
    automation: Automation
    automation_settings: AutomationSettings
    team: TeamDesk
    # The one the graph's plans run under: `task/cancel` reaches their live tasks through it.
    coordinator: Coordinator
    shutdown_requested: asyncio.Event = field(default_factory=asyncio.Event)
