"""Race-resistant file I/O beneath the workspace root.

Paths are first checked by :func:`.paths.resolve`, which yields symlink-free real components.
This module then opens them one component at a time relative to directory fds with
``O_NOFOLLOW``, so a symlink or FIFO swapped in between the check and the use makes the operation
fail instead of escaping or hanging. Writes go to a temporary file in the same directory and are
renamed over the target, which replaces (never follows) whatever sits at the final name.

A temporary file (``.atrium-<16 hex>.tmp``) is locked (``flock``) by its writer from creation
to rename, so a write killed mid-way leaves an unlocked one: walks (listing, search) never show
temporary files, and :func:`remove_stale_temps` (run when a server starts) removes the
unlocked ones. The target itself is never partial: it is the old file until the rename.

POSIX only: it relies on ``dir_fd`` support and ``O_NOFOLLOW``.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import secrets
import stat
import time
from collections.abc import Generator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from .errors import ErrorCode, PathError, io_error
from .models import EntryType

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _O_CLOEXEC
SKIPPED_DIRS = frozenset({".git", ".hg", ".svn"})
# A hard link is the file itself under a second name; nothing tells where the other names lie,
# so one may be a file outside the workspace (an SSH key linked in). Reading such a file is
# refused. Writing over it is safe: the new content is renamed over this name only, so the
# other names keep the old content.
_HARD_LINK = "file has other hard links, which may lie outside the workspace"
_TEMP_NAME = re.compile(r"\.atrium-[0-9a-f]{16}\.tmp")


def is_temp_name(name: str) -> bool:
    """Whether ``name`` is one of the temporary files writes make (see the module docstring)."""
    return _TEMP_NAME.fullmatch(name) is not None


@dataclass(frozen=True)
class DirEntry:
    """One entry met while walking; ``dir_fd`` is valid only while the walk is paused on it."""

    parts: tuple[str, ...]
    kind: EntryType
    size: int | None
    dir_fd: int

    @property
    def name(self) -> str:
        return self.parts[-1]


def _refusal(display: str, exc: OSError) -> PathError:
    """Translate an OSError met during confined I/O into a typed error."""
    if exc.errno == errno.ELOOP:
        return PathError(ErrorCode.SYMLINK_ESCAPE, display, "path changed into a symlink")
    if exc.errno == errno.ENOTDIR:
        return PathError(ErrorCode.NOT_A_DIRECTORY, display, "a parent is not a directory")
    if exc.errno == errno.EISDIR:
        return PathError(ErrorCode.IS_A_DIRECTORY, display, "is a directory")
    if exc.errno == errno.ENOENT:
        return PathError(ErrorCode.NOT_FOUND, display, "no such file or directory")
    if exc.errno == errno.ENAMETOOLONG:
        return PathError(ErrorCode.TOO_LONG, display, "path is too long for the filesystem")
    return io_error(display, exc)


@contextmanager
def open_dir(
    root: Path, parts: Sequence[str], display: str, *, create: bool = False
) -> Generator[int]:
    """Yield an fd for the directory ``root/parts``, opened without following any symlink.

    Raises:
        PathError: ``symlink_escape`` if a component became a symlink, ``not_a_directory``,
            ``not_found`` (unless ``create``), or an I/O code.
    """
    try:
        fd = os.open(root, _DIR_FLAGS)
    except OSError as exc:
        raise _refusal(display, exc) from None
    try:
        for part in parts:
            child = _open_child(fd, part, display, create=create)
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def _open_child(fd: int, part: str, display: str, *, create: bool) -> int:
    """Open directory ``part`` under ``fd`` without following a symlink, creating it if asked."""
    try:
        try:
            return os.open(part, _DIR_FLAGS, dir_fd=fd)
        except FileNotFoundError:
            if not create:
                raise
            with suppress(FileExistsError):
                os.mkdir(part, dir_fd=fd)
            return os.open(part, _DIR_FLAGS, dir_fd=fd)
    except OSError as exc:
        if exc.errno == errno.ENOTDIR and _is_link(fd, part):
            # O_DIRECTORY|O_NOFOLLOW reports a symlink as ENOTDIR on Linux.
            raise PathError(
                ErrorCode.SYMLINK_ESCAPE, display, "path changed into a symlink"
            ) from None
        raise _refusal(display, exc) from None


def _is_link(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def read_file(root: Path, parts: Sequence[str], display: str, max_bytes: int) -> bytes:
    """Read a regular file, refusing anything larger than ``max_bytes``.

    Raises:
        PathError: ``not_regular``, ``hard_link``, ``symlink_escape``, ``is_a_directory`` and
            the like.
        WorkspaceError: ``too_large`` when the file exceeds ``max_bytes``.
    """
    with open_dir(root, parts[:-1], display) as dir_fd:
        return read_at(dir_fd, parts[-1], display, max_bytes)


def read_at(dir_fd: int, name: str, display: str, max_bytes: int) -> bytes:
    """Read the regular file ``name`` under ``dir_fd`` (see :func:`read_file`); a file with more
    than one hard link is refused (``hard_link``)."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _O_CLOEXEC
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except OSError as exc:
        raise _refusal(display, exc) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise PathError(ErrorCode.IS_A_DIRECTORY, display, "is a directory")
        if not stat.S_ISREG(info.st_mode):
            raise PathError(ErrorCode.NOT_REGULAR, display, "not a regular file")
        if info.st_nlink > 1:
            raise PathError(ErrorCode.HARD_LINK, display, _HARD_LINK)
        chunks: list[bytes] = []
        total = 0
        while total <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as exc:
        raise _refusal(display, exc) from None
    finally:
        os.close(fd)
    if total > max_bytes:
        raise PathError(ErrorCode.TOO_LARGE, display, f"file is larger than {max_bytes} bytes")
    return b"".join(chunks)


def write_file(root: Path, parts: Sequence[str], display: str, data: bytes) -> bool:
    """Atomically create or replace the regular file ``root/parts``; return True if created.

    Missing parent directories are created. An existing file keeps its permission bits.

    Raises:
        PathError: ``is_a_directory``, ``not_regular``, ``symlink_escape`` or an I/O code.
    """
    with open_dir(root, parts[:-1], display, create=True) as dir_fd:
        name = parts[-1]
        mode = _existing_mode(dir_fd, name, display)
        tmp, fd = _create_temp(dir_fd, display)
        try:
            _write_all(fd, data, mode)
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except OSError as exc:
            _unlink_quietly(tmp, dir_fd)
            raise _refusal(display, exc) from None
        finally:
            os.close(fd)  # releases the lock, once the file has its final name
        return mode is None


def _create_temp(dir_fd: int, display: str) -> tuple[str, int]:
    """Create a temporary file under ``dir_fd`` and lock it; return its name and fd.

    A sweep may take the file between its creation and the lock (it cannot tell it from a dead
    writer's then): the name is checked to still be this file once locked, else it starts over.

    Raises:
        PathError: an I/O code.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _O_CLOEXEC
    while True:
        tmp = f".atrium-{secrets.token_hex(8)}.tmp"
        try:
            fd = os.open(tmp, flags, 0o666, dir_fd=dir_fd)
        except OSError as exc:
            raise _refusal(display, exc) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            ours = os.fstat(fd)
            named = os.stat(tmp, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            os.close(fd)
            continue
        except OSError as exc:
            os.close(fd)
            _unlink_quietly(tmp, dir_fd)
            raise _refusal(display, exc) from None
        if (named.st_dev, named.st_ino) == (ours.st_dev, ours.st_ino):
            return tmp, fd
        os.close(fd)


def _write_all(fd: int, data: bytes, mode: int | None) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    if mode is not None:
        os.fchmod(fd, mode)
    os.fsync(fd)


def _existing_mode(dir_fd: int, name: str, display: str) -> int | None:
    """Permission bits of the file being replaced, or None if there is none yet."""
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _refusal(display, exc) from None
    if stat.S_ISLNK(info.st_mode):
        raise PathError(ErrorCode.SYMLINK_ESCAPE, display, "path changed into a symlink")
    if stat.S_ISDIR(info.st_mode):
        raise PathError(ErrorCode.IS_A_DIRECTORY, display, "is a directory")
    if not stat.S_ISREG(info.st_mode):
        raise PathError(ErrorCode.NOT_REGULAR, display, "not a regular file")
    return stat.S_IMODE(info.st_mode)


def _unlink_quietly(name: str, dir_fd: int) -> None:
    with suppress(OSError):
        os.unlink(name, dir_fd=dir_fd)


def remove_stale_temps(root: Path, *, seconds: float) -> int:
    """Remove the temporary files that writes killed mid-way left anywhere under ``root``
    (symlinks not followed, :data:`SKIPPED_DIRS` not entered); a file its writer still locks is
    left alone. Stops after ``seconds``: what a huge tree keeps is never shown by a walk, and the
    next start goes on. Returns how many were removed."""
    deadline = time.monotonic() + seconds
    try:
        fd = os.open(root, _DIR_FLAGS)
    except OSError:
        return 0
    try:
        return _sweep(fd, deadline)
    finally:
        os.close(fd)


def _sweep(dir_fd: int, deadline: float) -> int:
    try:
        with os.scandir(dir_fd) as it:
            entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
    except OSError:
        return 0
    removed = 0
    for name, is_dir in entries:
        if time.monotonic() > deadline:
            break
        if is_temp_name(name) and not is_dir:
            removed += _remove_if_abandoned(dir_fd, name)
        elif is_dir and name not in SKIPPED_DIRS:
            try:
                child = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
            except OSError:  # gone, or swapped for a symlink
                continue
            try:
                removed += _sweep(child, deadline)
            finally:
                os.close(child)
    return removed


def _remove_if_abandoned(dir_fd: int, name: str) -> bool:
    """Unlink the temporary file ``name`` if no writer holds its lock."""
    for access in (os.O_RDONLY, os.O_WRONLY):  # a file chmod-ed like its target may lack one
        try:
            fd = os.open(name, access | os.O_NOFOLLOW | os.O_NONBLOCK | _O_CLOEXEC, dir_fd=dir_fd)
        except PermissionError:
            continue
        except OSError:
            return False
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return False
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.unlink(name, dir_fd=dir_fd)  # under the lock: no writer can be mid-way
        except OSError:  # BlockingIOError: its writer is alive
            return False
        finally:
            os.close(fd)
        return True
    return False


def walk(root: Path, parts: Sequence[str], display: str, *, recursive: bool) -> Generator[DirEntry]:
    """Yield the entries of directory ``root/parts`` (sorted by name), depth-first if recursive.

    Symlinks are reported but never followed; directories in :data:`SKIPPED_DIRS` are listed but
    not descended into. Parts in the yielded entries are relative to ``root``.
    """
    with open_dir(root, parts, display) as dir_fd:
        try:
            names = _names(dir_fd)
        except OSError as exc:
            raise _refusal(display, exc) from None
        yield from _walk_fd(dir_fd, names, tuple(parts), recursive=recursive)


def _names(dir_fd: int) -> list[str]:
    with os.scandir(dir_fd) as it:
        return sorted(entry.name for entry in it)


def _walk_fd(
    dir_fd: int, names: list[str], prefix: tuple[str, ...], *, recursive: bool
) -> Generator[DirEntry]:
    for name in names:
        if is_temp_name(name):
            continue
        try:
            info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            continue
        kind = _kind(info.st_mode)
        yield DirEntry((*prefix, name), kind, info.st_size if kind == "file" else None, dir_fd)
        if recursive and kind == "dir" and name not in SKIPPED_DIRS:
            try:
                child = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
            except OSError:
                continue
            try:
                child_names = _names(child)
            except OSError:
                os.close(child)
                continue
            try:
                yield from _walk_fd(child, child_names, (*prefix, name), recursive=True)
            finally:
                os.close(child)


def _kind(mode: int) -> EntryType:
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISLNK(mode):
        return "symlink"
    return "other"
