"""Race-resistant file I/O beneath the workspace root.

Paths are first checked by :func:`.paths.resolve`, which yields symlink-free real components.
This module then opens them one component at a time relative to directory fds with
``O_NOFOLLOW``, so a symlink or FIFO swapped in between the check and the use makes the operation
fail instead of escaping or hanging. Writes go to a temporary file in the same directory and are
renamed over the target, which replaces (never follows) whatever sits at the final name.

POSIX only: it relies on ``dir_fd`` support and ``O_NOFOLLOW``.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
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
        tmp = f".atrium-{secrets.token_hex(8)}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _O_CLOEXEC
        try:
            fd = os.open(tmp, flags, 0o666, dir_fd=dir_fd)
        except OSError as exc:
            raise _refusal(display, exc) from None
        try:
            _write_all(fd, data, mode)
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except OSError as exc:
            _unlink_quietly(tmp, dir_fd)
            raise _refusal(display, exc) from None
        return mode is None


def _write_all(fd: int, data: bytes, mode: int | None) -> None:
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if mode is not None:
            os.fchmod(fd, mode)
        os.fsync(fd)
    finally:
        os.close(fd)


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
