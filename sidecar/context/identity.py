"""The identity files: who the agent is, who the author is, how to behave.

`.atrium/AGENT.md` (or `AGENTS.md` at the workspace root, the convention other agents use),
`.atrium/USER.md` and `.atrium/SOUL.md` are read at every turn and pinned in the context: never
dropped, never summarized. A file over its token budget is cut with a visible marker and a
warning; a file that is not UTF-8, is too large to read, or is a symlink leading outside the
workspace is skipped with a warning. Reading blocks, so callers run `read_identity` in a worker
thread.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

IDENTITY_FILES: tuple[tuple[str, ...], ...] = (
    (".atrium/AGENT.md", "AGENTS.md"),
    (".atrium/USER.md",),
    (".atrium/SOUL.md",),
)
ROLES = {
    ".atrium/AGENT.md": "the author's standing instructions for you",
    "AGENTS.md": "the author's standing instructions for you",
    ".atrium/USER.md": "who the author is",
    ".atrium/SOUL.md": "your persona and tone",
}
MAX_READ_BYTES = 1_000_000


@dataclass(frozen=True, slots=True)
class IdentityFile:
    path: str
    text: str
    tokens: int
    full_tokens: int
    truncated: bool


@dataclass(frozen=True, slots=True)
class Identity:
    files: tuple[IdentityFile, ...] = ()
    warnings: tuple[str, ...] = field(default=())


def truncation_marker(path: str, shown: int, total: int) -> str:
    return (
        f"\n[… {path} truncated: {total} tokens, only the first {shown} fit its budget. "
        "Shorten the file to have all of it read.]"
    )


def read_identity(workspace: Path, per_file_tokens: int, count: Callable[[str], int]) -> Identity:
    """Read and budget the identity files of `workspace` (blocking)."""
    files: list[IdentityFile] = []
    warnings: list[str] = []
    try:
        root = workspace.resolve(strict=True)
    except OSError:
        return Identity()
    for candidates in IDENTITY_FILES:
        for relative in candidates:
            text = _read(root, relative, warnings)
            if text is None:
                continue
            files.append(_fit(relative, text, per_file_tokens, count, warnings))
            break
    return Identity(tuple(files), tuple(warnings))


def _read(root: Path, relative: str, warnings: list[str]) -> str | None:
    path = root / relative
    if not path.exists() and not path.is_symlink():
        return None
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError):
        warnings.append(f"{relative} is skipped: it is a broken or looping link.")
        return None
    if not real.is_relative_to(root):
        warnings.append(f"{relative} is skipped: it is a link to a file outside the workspace.")
        return None
    if not real.is_file():
        warnings.append(f"{relative} is skipped: it is not a regular file.")
        return None
    try:
        text, cut = read_head(real, MAX_READ_BYTES)
    except OSError as exc:
        warnings.append(f"{relative} is skipped: it cannot be read ({exc.strerror}).")
        return None
    except UnicodeDecodeError:
        warnings.append(f"{relative} is skipped: it is not UTF-8 text.")
        return None
    if "\x00" in text:
        warnings.append(f"{relative} is skipped: it is not text.")
        return None
    if cut:
        warnings.append(f"{relative} is over {MAX_READ_BYTES} bytes; only its start is read.")
    return text


def read_head(path: Path, limit: int) -> tuple[str, bool]:
    """The UTF-8 text of the file at `path`, at most its first `limit` bytes, and whether the
    file was longer (blocking). At most `limit + 1` bytes are read, however large the file; a
    character split by the cut is left out rather than called invalid. A leading byte-order
    mark is dropped.

    Raises:
        OSError: the file cannot be read.
        UnicodeDecodeError: the bytes read are not UTF-8 (a split last character excepted).
    """
    with path.open("rb") as handle:
        raw = handle.read(limit + 1)
    cut = len(raw) > limit
    # Not final when cut: an incomplete last character is held back, invalid bytes still raise.
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    return decoder.decode(raw[:limit], final=not cut), cut


def _fit(
    relative: str, text: str, budget: int, count: Callable[[str], int], warnings: list[str]
) -> IdentityFile:
    total = count(text)
    if total <= budget:
        return IdentityFile(relative, text, total, total, truncated=False)
    # Cut by characters in proportion, then trim until the text and its marker fit.
    keep = max(0, int(len(text) * budget / total))
    marker = truncation_marker(relative, budget, total)
    room = max(0, budget - count(marker))
    cut = text[:keep]
    while cut and count(cut) > room:
        cut = cut[: int(len(cut) * 0.9)]
    shown = cut + marker
    warnings.append(
        f"{relative} is {total} tokens, over its budget of {budget}: it was truncated "
        "(marked in the context)."
    )
    return IdentityFile(relative, shown, count(shown), total, truncated=True)
