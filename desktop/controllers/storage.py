"""`StorageController`: the two ways out when the sidecar refuses its database. No Qt.

A damaged or emptied database is refused by the sidecar (exit `EXIT_REFUSED` with a
`StorageRefusal`, `sidecar.protocol.storage`) and is not restarted. The author chooses: restore
one of the automatic backups, or start fresh. Either way the sidecar is started once more with
the matching repair flag and does the moving itself, under its data folder's lock; the window
never touches the database's files. A full disk is refused too, but nothing here can help
with it: the banner says so, and its Restart tries again once there is room.
"""

from __future__ import annotations

import logging

from desktop.ipc.process import SidecarProcess
from desktop.models.emitter import Emitter
from sidecar.protocol import RESTORE_BACKUP_FLAG, START_FRESH_FLAG, StorageRefusal

logger = logging.getLogger(__name__)


class StorageController:
    """Events:
    refused(StorageRefusal): the sidecar refused a damaged or emptied database; the author
        should choose `restore` or `start_fresh`.
    """

    def __init__(self, process: SidecarProcess) -> None:
        self._process = process
        self.refused: Emitter[[StorageRefusal]] = Emitter()
        self.last: StorageRefusal | None = None
        process.storage_refused.connect(self._on_storage_refused)

    def _on_storage_refused(self, refusal: StorageRefusal) -> None:
        if refusal.problem == "disk_full":
            return
        self.last = refusal
        self.refused.emit(refusal)

    def restore(self, backup: str) -> None:
        """Start the sidecar with `backup` put in the database's place (the damaged file is
        moved aside, not deleted)."""
        logger.warning("restoring the database from %s", backup)
        self._process.start([RESTORE_BACKUP_FLAG, backup])

    def start_fresh(self) -> None:
        """Start the sidecar with the damaged file (and its -wal, -shm) moved aside."""
        logger.warning("starting fresh: the database is moved aside")
        self._process.start([START_FRESH_FLAG])
