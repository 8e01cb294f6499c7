"""identity/get, identity/set: the workspace's identity files, as the Memory panel edits them.

They are read and written off the event loop, never through a link, never outside the workspace.
"""

from __future__ import annotations

import asyncio
import os
import secrets
from pathlib import Path
from typing import Any, cast

from sidecar import settings as settings_mod
from sidecar.context.identity import IDENTITY_FILES, read_head
from sidecar.handlers.registry import registry
from sidecar.handlers.services import Services
from sidecar.protocol import (
    IDENTITY_GET,
    IDENTITY_SET,
    MAX_IDENTITY_BYTES,
    IdentityFileInfo,
    IdentityGetParams,
    IdentityGetResult,
    IdentitySetParams,
    MemoryErrorCode,
    RpcError,
)

IO_DEADLINE_S = 10.0
IDENTITY_PATHS = tuple(path for group in IDENTITY_FILES for path in group)


def _workspace(svc: Services) -> Path:
    return settings_mod.resolve_workspace(svc.settings.load(), os.environ, svc.data_dir)


@registry.method(IDENTITY_GET)
async def identity_get(svc: Services, params: IdentityGetParams) -> IdentityGetResult:
    del params
    root = _workspace(svc)
    files = await asyncio.wait_for(asyncio.to_thread(_read_all, root), IO_DEADLINE_S)
    return IdentityGetResult(workspace=str(root), files=files)


def _read_all(root: Path) -> tuple[IdentityFileInfo, ...]:
    """The identity files of `root` as the Memory panel edits them (blocking). A file longer
    than `identity/set` accepts is read only to that length and marked `truncated`."""
    infos: list[IdentityFileInfo] = []
    for relative in IDENTITY_PATHS:
        path = root / relative
        name = cast(Any, relative)
        if not path.exists() and not path.is_symlink():
            infos.append(IdentityFileInfo(path=name, exists=False))
            continue
        try:
            real = _confined(root, path)
            if not real.is_file():
                raise ValueError("it is not a regular file")
            text, cut = _editable(real)
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            error = "not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else str(exc)
            infos.append(IdentityFileInfo(path=name, exists=True, error=error))
            continue
        note = (
            f"longer than {MAX_IDENTITY_BYTES} characters: only its start is shown, and saving "
            "it here would replace the whole file with what is shown"
            if cut
            else None
        )
        infos.append(IdentityFileInfo(path=name, exists=True, text=text, truncated=cut, error=note))
    return tuple(infos)


def _editable(path: Path) -> tuple[str, bool]:
    """The start of the file that `identity/set` could write back (at most
    `MAX_IDENTITY_BYTES` characters, so at most four bytes each are read), and whether the file
    is longer.

    Raises:
        OSError: the file cannot be read.
        UnicodeDecodeError: it is not UTF-8 text.
    """
    text, cut = read_head(path, 4 * MAX_IDENTITY_BYTES)
    if len(text) > MAX_IDENTITY_BYTES:
        return text[:MAX_IDENTITY_BYTES], True
    return text, cut


def _confined(root: Path, path: Path) -> Path:
    """Raises:
    ValueError: the path is a broken or looping link, or leads outside the workspace."""
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise ValueError("it is a broken or looping link") from exc
    if not real.is_relative_to(root.resolve()):
        raise ValueError("it is a link to a file outside the workspace")
    return real


@registry.method(IDENTITY_SET)
async def identity_set(svc: Services, params: IdentitySetParams) -> IdentityFileInfo:
    root = _workspace(svc)
    try:
        await asyncio.wait_for(
            asyncio.to_thread(_write, root, params.path, params.text), IO_DEADLINE_S
        )
    except (OSError, ValueError) as exc:
        raise RpcError(MemoryErrorCode.IDENTITY_REFUSED, f"{params.path}: {exc}") from exc
    return IdentityFileInfo(path=params.path, exists=True, text=params.text)


def _write(root: Path, relative: str, text: str) -> None:
    """Write an identity file of the workspace `root` whole, through a temporary file
    (blocking). Nothing on the way may be a link: a linked `.atrium` folder or file could lead
    anywhere, whether or not the file exists yet.

    Raises:
        ValueError: a folder or the file on the way is a link or not what it should be, or the
            file would land outside the workspace.
        OSError: the file system refused.
    """
    real_root = root.resolve(strict=True)
    *folders, name = Path(relative).parts
    parent = real_root
    for folder in folders:
        parent = parent / folder
        if parent.is_symlink():
            raise ValueError(f"{folder} is a link; identity files are written in real folders only")
        parent.mkdir(exist_ok=True)
    target = parent / name
    if target.is_symlink():
        raise ValueError("it is a link; only a regular file is written")
    if target.exists() and not target.is_file():
        raise ValueError("it is not a regular file")
    if not parent.resolve(strict=True).is_relative_to(real_root):
        raise ValueError("it would be written outside the workspace")
    temporary = parent / f".{name}.{secrets.token_hex(6)}.tmp"
    # O_EXCL: a link planted at the temporary name is never followed.
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    done = False
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.replace(temporary, target)
        done = True
    finally:
        if not done:
            temporary.unlink(missing_ok=True)
