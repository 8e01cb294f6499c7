"""The author's settings for work that runs on its own: lane caps, the heartbeat, the default
queue mode. Kept in `automation.json` in the data dir; a corrupt file is set aside and the
defaults apply."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from sidecar.protocol import AutomationInfo

log = logging.getLogger(__name__)


class AutomationSettings:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._cached: tuple[float, AutomationInfo] | None = None

    def load(self) -> AutomationInfo:
        try:
            stamp = self.path.stat().st_mtime
        except FileNotFoundError:
            return AutomationInfo()
        if self._cached is not None and self._cached[0] == stamp:
            return self._cached[1]
        try:
            info = AutomationInfo.model_validate(json.loads(self.path.read_text("utf-8")))
        except (OSError, ValueError, ValidationError) as exc:
            backup = self.path.with_suffix(f".corrupt-{int(time.time())}.json")
            log.error("automation settings %s unreadable (%s); moved to %s", self.path, exc, backup)
            self.path.replace(backup)
            return AutomationInfo()
        self._cached = (stamp, info)
        return info

    def update(self, changes: dict[str, Any]) -> AutomationInfo:
        """Raises:
        pydantic.ValidationError: the result is not valid settings."""
        merged = {**self.load().model_dump(), **{k: v for k, v in changes.items() if v is not None}}
        info = AutomationInfo.model_validate(merged)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(info.model_dump_json(indent=2), encoding="utf-8")
        tmp.replace(self.path)
        self._cached = None
        return info

    def lane_caps(self) -> dict[str, int]:
        info = self.load()
        return {"main": info.lane_main, "subagent": info.lane_subagent, "cron": info.lane_cron}

    def default_mode(self) -> str:
        return self.load().default_mode
