"""Daily backups of the database: one at start-up when the last is older than a day, then one a
day, the newest `keep()` kept (the author's setting; 0 takes none and removes none).

The copy itself (`sidecar.store.backups`) runs on a worker thread with a deadline: past it, the
copy is told to stop and stops at its next step, so neither the event loop nor shutdown waits
on a large database. A backup that fails (no room, a damaged page) is logged and tried again at
the next check; it never touches the backups already there.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable

from sidecar.store.backups import (
    BackupFailedError,
    BackupStoppedError,
    last_backup_time,
    prune,
    take_backup,
)
from sidecar.store.disk import DiskFullError
from sidecar.store.files import Backup, DatabaseFiles

log = logging.getLogger(__name__)

DAY_S = 24 * 3600.0
CHECK_EVERY_S = 3600.0
"""How often the loop asks whether a backup is due (a setting turned on is seen within it)."""
BACKUP_DEADLINE_S = 600.0


class DailyBackups:
    """The sidecar's backup desk: `start()` runs the daily loop, `run_if_due()` one check."""

    def __init__(
        self,
        files: DatabaseFiles,
        keep: Callable[[], int],
        *,
        clock: Callable[[], float] = time.time,
        deadline_s: float = BACKUP_DEADLINE_S,
        check_every_s: float = CHECK_EVERY_S,
    ) -> None:
        self._files = files
        self._keep = keep
        self._clock = clock
        self._deadline_s = deadline_s
        self._check_every_s = check_every_s
        self._task: asyncio.Task[None] | None = None
        self._stop = threading.Event()
        self._running: asyncio.Future[Backup] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.ensure_future(self._loop())

    async def _loop(self) -> None:
        while True:
            await self.run_if_due()
            await asyncio.sleep(self._check_every_s)

    async def run_if_due(self) -> Backup | None:
        """Take a backup when backups are on and the newest is a day old (or there is none);
        the new backup, or None when none was due or it failed (logged)."""
        keep = self._keep()
        if keep <= 0:
            return None
        now = self._clock()
        last = await asyncio.to_thread(last_backup_time, self._files)
        if last is not None and now - last < DAY_S:
            return None
        return await self.backup_now(keep)

    async def backup_now(self, keep: int) -> Backup | None:
        """Back up now and keep the newest `keep`; None when it failed (logged)."""
        if self._running is not None:
            return None
        self._stop.clear()
        running = asyncio.ensure_future(asyncio.to_thread(self._take, self._clock(), keep))
        self._running = running
        try:
            return await asyncio.wait_for(asyncio.shield(running), self._deadline_s)
        except TimeoutError:
            log.warning("the backup took over %.0f s; stopping it", self._deadline_s)
            self._stop.set()
            with contextlib.suppress(BackupStoppedError):
                await running
            return None
        except BackupStoppedError:
            return None
        except DiskFullError as exc:
            log.warning("no room for the daily backup: %s", exc)
            return None
        except BackupFailedError as exc:
            log.error("the daily backup failed: %s", exc)
            return None
        finally:
            self._running = None

    def _take(self, now: float, keep: int) -> Backup:
        backup = take_backup(self._files, now, self._stop)
        prune(self._files, keep)
        return backup

    async def aclose(self) -> None:
        """Stop the loop and a backup under way (it stops at its next step)."""
        self._stop.set()
        running = self._running
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if running is not None:
            with contextlib.suppress(BackupStoppedError, BackupFailedError, DiskFullError):
                await running
