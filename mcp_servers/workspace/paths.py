"""Path confinement for the workspace: every path the agent names stays under the workspace root.

Two steps, both pure (they look at the filesystem but never change it):

1. :func:`parse_relative` checks the text of a path and returns its normalized components. It
   refuses absolute paths in POSIX and Windows forms (``/x``, ``\\x``, ``C:\\x``, ``C:x``,
   ``\\\\server\\share``), ``..`` anywhere, names made only of dots (Windows folds ``...`` and
   ``.. `` into ``..``), a leading ``~`` / ``~user``, NUL and other control characters,
   whitespace-only names, and over-long paths or names. Both ``/`` and ``\\`` separate components.
2. :func:`resolve` walks those components from the real root with ``lstat``. A symlink is
   followed only when its target (dangling or not) stays inside the root; anything that is not a
   regular file or a directory (FIFO, socket, device) is refused.

The I/O layer (:mod:`.fileio`) then opens the resolved *real* path component by component with
``O_NOFOLLOW`` relative to directory fds, so a symlink swapped in after the check fails instead of
being followed (time-of-check/time-of-use). A hard link cannot be traced to its other names, so
:mod:`.fileio` refuses to read any file with more than one link (``hard_link``). Not covered:
bind mounts made by the author.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from .errors import ErrorCode, PathError, io_error

MAX_PATH_CHARS = 4096
MAX_NAME_BYTES = 255

_DRIVE = re.compile(r"^[A-Za-z]:")
_SEPARATORS = re.compile(r"[/\\]")


class Kind(StrEnum):
    """What a resolved path names."""

    FILE = "file"
    DIR = "dir"
    MISSING = "missing"


class Expect(StrEnum):
    """What the operation needs the path to name."""

    FILE = "file"
    DIR = "dir"
    ANY = "any"


@dataclass(frozen=True)
class Resolved:
    """A path accepted by confinement.

    ``display`` is the normalized relative path the caller asked for (POSIX separators, ``.`` for
    the root); ``real_parts`` are the components of the symlink-free real path under ``root``.
    """

    root: Path
    display: str
    real_parts: tuple[str, ...]
    kind: Kind

    @property
    def real(self) -> Path:
        """The absolute real path (for messages and tests; I/O goes through :mod:`.fileio`)."""
        return self.root.joinpath(*self.real_parts)


def real_root(root: Path) -> Path:
    """Return the real (symlink-free) absolute path of an existing workspace root directory.

    Raises:
        NotADirectoryError: If ``root`` does not exist or is not a directory.
    """
    real = Path(os.path.realpath(root))
    if not real.is_dir():
        raise NotADirectoryError(f"workspace root is not a directory: {root}")
    return real


def parse_relative(path: str) -> tuple[str, ...]:
    """Check ``path`` lexically and return its components; ``()`` means the root itself.

    Raises:
        PathError: With a code from ``empty``, ``nul``, ``too_long``, ``invalid_char``,
            ``absolute``, ``home``, ``parent_escape`` or ``blank_name``.
    """
    if "\x00" in path:
        raise PathError(ErrorCode.NUL, path, "path contains a NUL byte")
    if path.strip() == "":
        raise PathError(ErrorCode.EMPTY, path, "path is empty")
    if len(path) > MAX_PATH_CHARS:
        raise PathError(ErrorCode.TOO_LONG, path[:64] + "...", "path is too long")
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in path):
        raise PathError(ErrorCode.INVALID_CHAR, path, "path contains a control character")
    if path[0] in "/\\" or _DRIVE.match(path):
        raise PathError(ErrorCode.ABSOLUTE, path, "path must be relative to the workspace root")
    if path.startswith("~"):
        raise PathError(ErrorCode.HOME, path, "home-directory paths are not allowed")
    return tuple(
        part for part in (_check_component(path, p) for p in _SEPARATORS.split(path)) if part
    )


def _check_component(path: str, part: str) -> str:
    """Validate one component; return ``""`` for components that are no-ops (``""``, ``.``)."""
    if part in ("", "."):
        return ""
    if part == "..":
        raise PathError(ErrorCode.PARENT_ESCAPE, path, "'..' is not allowed in paths")
    if part.strip() == "":
        raise PathError(ErrorCode.BLANK_NAME, path, "a path component is only whitespace")
    if part.rstrip(" .") == "":
        raise PathError(ErrorCode.PARENT_ESCAPE, path, "names made only of dots are not allowed")
    if _DRIVE.match(part):
        raise PathError(ErrorCode.ABSOLUTE, path, "a path component names a drive")
    try:
        encoded = part.encode("utf-8")
    except UnicodeEncodeError:
        raise PathError(ErrorCode.INVALID_CHAR, path, "path is not valid Unicode") from None
    if len(encoded) > MAX_NAME_BYTES:
        raise PathError(ErrorCode.TOO_LONG, path, "a path component is too long")
    return part


def is_within(path: str | Path, root: str | Path) -> bool:
    """True when the absolute ``path`` equals ``root`` or lies beneath it (lexically)."""
    path_s, root_s = os.fspath(path), os.fspath(root)
    return os.path.commonpath([path_s, root_s]) == root_s


def resolve(
    root: Path, path: str, *, expect: Expect = Expect.ANY, must_exist: bool = True
) -> Resolved:
    """Resolve ``path`` under the real workspace ``root`` without leaving it.

    Args:
        root: The real workspace root (see :func:`real_root`).
        path: The caller's relative path.
        expect: Whether the operation needs a file, a directory, or either.
        must_exist: When False, missing trailing components are allowed (for writes); they are
            returned as ``Kind.MISSING`` with the components appended to the real path.

    Raises:
        PathError: The lexical codes of :func:`parse_relative`, or ``symlink_escape``,
            ``symlink_loop``, ``not_regular``, ``not_found``, ``not_a_directory``,
            ``is_a_directory``, ``permission_denied``, ``too_long``, ``io_error``.
    """
    parts = parse_relative(path)
    display = "/".join(parts) or "."
    real_parts: list[str] = []
    mode = os.lstat(root).st_mode
    for index, part in enumerate(parts):
        if not stat.S_ISDIR(mode):
            raise PathError(ErrorCode.NOT_A_DIRECTORY, path, "a parent is not a directory")
        candidate = root.joinpath(*real_parts, part)
        found = _lstat(path, candidate)
        if found is not None and stat.S_ISLNK(found.st_mode):
            real_parts = list(_follow_link(root, path, candidate))
            found = _lstat(path, root.joinpath(*real_parts))
        else:
            real_parts.append(part)
        if found is None:
            if must_exist:
                raise PathError(ErrorCode.NOT_FOUND, path, "no such file or directory")
            real_parts.extend(parts[index + 1 :])
            return _check_kind(Resolved(root, display, tuple(real_parts), Kind.MISSING), expect)
        mode = found.st_mode
    return _check_kind(Resolved(root, display, tuple(real_parts), _kind_of(path, mode)), expect)


def _lstat(path: str, candidate: Path) -> os.stat_result | None:
    try:
        return os.lstat(candidate)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise PathError(ErrorCode.NOT_A_DIRECTORY, path, "a parent is not a directory") from None
    except OSError as exc:
        raise _os_error(path, exc) from None


def _follow_link(root: Path, path: str, link: Path) -> tuple[str, ...]:
    """Return the real components under ``root`` that ``link`` points to, dangling or not."""
    try:
        target = os.path.realpath(link, strict=True)
    except FileNotFoundError:
        target = os.path.realpath(link)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise PathError(ErrorCode.SYMLINK_LOOP, path, "symlink loop") from None
        raise _os_error(path, exc) from None
    if not is_within(target, root):
        raise PathError(ErrorCode.SYMLINK_ESCAPE, path, "symlink points outside the workspace")
    return Path(target).relative_to(root).parts


def _kind_of(path: str, mode: int) -> Kind:
    if stat.S_ISDIR(mode):
        return Kind.DIR
    if stat.S_ISREG(mode):
        return Kind.FILE
    raise PathError(ErrorCode.NOT_REGULAR, path, "not a regular file or directory")


def _check_kind(resolved: Resolved, expect: Expect) -> Resolved:
    if expect is Expect.FILE and resolved.kind is Kind.DIR:
        raise PathError(ErrorCode.IS_A_DIRECTORY, resolved.display, "is a directory")
    if expect is Expect.DIR and resolved.kind is Kind.FILE:
        raise PathError(ErrorCode.NOT_A_DIRECTORY, resolved.display, "is not a directory")
    return resolved


def _os_error(path: str, exc: OSError) -> PathError:
    if exc.errno == errno.ENAMETOOLONG:
        return PathError(ErrorCode.TOO_LONG, path, "path is too long for the filesystem")
    return io_error(path, exc)
