"""The workspace MCP server: list, read, write, edit, search and preview files under one root.

Every path argument is relative to the workspace root and confined by :mod:`.paths`. Refusals
are MCP ``isError`` results whose text reads ``Error executing tool <name>: [<code>] <message>``
with a stable code from :class:`.errors.ErrorCode`. Successful calls return readable text plus
``structuredContent`` matching the tool's ``outputSchema`` (the models in :mod:`.models`).
"""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from mcp_servers.serving import build_mcp_server

from . import fileio, ops
from .errors import WorkspaceError
from .models import EditResult, ListResult, PreviewResult, ReadResult, SearchResult, WriteResult
from .ops import Limits
from .paths import real_root
from .preview import plan

SERVER_NAME = "atrium-workspace"

_READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)

TIME_LIMIT_NOTE = "(search stopped at its time limit; narrow the path or the pattern)"
"""The last line of a search's text when it ran out of its time budget (`timed_out`)."""

PathArg = Annotated[str, Field(description="Path relative to the workspace root ('.' = root).")]
OldArg = Annotated[str, Field(description="The exact text to replace.")]
NewArg = Annotated[str, Field(description="The text to put in its place.")]
ReplaceAllArg = Annotated[
    bool, Field(description="Replace every occurrence (false: `old` must occur exactly once).")
]


@contextmanager
def _refusals() -> Generator[None]:
    """Turn a typed workspace refusal into the SDK's tool error (an ``isError`` result)."""
    try:
        yield
    except WorkspaceError as exc:
        raise ToolError(str(exc)) from exc


def _result(model: BaseModel, text: str) -> CallToolResult:
    """Readable text for the model plus structured content for programs."""
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=model.model_dump(mode="json"),
    )


def build_server(root: Path, *, limits: Limits | None = None) -> MCPServer:
    """Build the workspace server confined to ``root``, after removing the temporary files of
    writes that died there (a kill mid-write; see :mod:`.fileio`).

    Raises:
        NotADirectoryError: If ``root`` is not an existing directory.
    """
    real = real_root(root)
    bounds = limits or Limits()
    fileio.remove_stale_temps(real, seconds=bounds.max_sweep_seconds)
    server = build_mcp_server(
        SERVER_NAME,
        title="Atrium workspace",
        instructions=(
            "Files of the author's workspace. Paths are relative to the workspace root; "
            "absolute paths, '..' and symlinks leading outside are refused."
        ),
    )
    _add_list(server, real, bounds)
    _add_read(server, real, bounds)
    _add_write(server, real)
    _add_edit(server, real, bounds)
    _add_search(server, real, bounds)
    _add_preview(server, real, bounds)
    return server


def _add_list(server: MCPServer, root: Path, limits: Limits) -> None:
    @server.tool(name="list", title="List directory", annotations=_READ_ONLY)
    def list_(
        path: PathArg = ".",
        glob: Annotated[
            str | None,
            Field(description="fnmatch pattern on the name, or on the relative path if it has '/'"),
        ] = None,
        recursive: Annotated[bool, Field(description="Also list subdirectories' entries.")] = False,
        max_entries: Annotated[int, Field(ge=1, description="Most entries to return.")] = 1000,
    ) -> Annotated[CallToolResult, ListResult]:
        """List a workspace directory: entries with type (file/dir/symlink/other) and size."""
        with _refusals():
            found = ops.list_dir(
                root, path, glob=glob, recursive=recursive, max_entries=max_entries, limits=limits
            )
        lines = [_entry_line(e.type, e.path, e.size) for e in found.entries]
        if found.truncated:
            lines.append("(more entries not shown)")
        return _result(found, "\n".join(lines) or f"{found.path} is empty")


def _entry_line(kind: str, path: str, size: int | None) -> str:
    suffix = "/" if kind == "dir" else ""
    detail = f"  ({size} bytes)" if size is not None else ""
    return f"{kind:<7} {path}{suffix}{detail}"


def _add_read(server: MCPServer, root: Path, limits: Limits) -> None:
    @server.tool(name="read", title="Read text file", annotations=_READ_ONLY)
    def read(
        path: PathArg,
        offset: Annotated[int, Field(ge=0, description="Lines to skip from the start.")] = 0,
        limit: Annotated[int | None, Field(ge=1, description="Most lines to return.")] = None,
    ) -> Annotated[CallToolResult, ReadResult]:
        """Read a UTF-8 text file, optionally a window of lines; binary/huge files are refused."""
        with _refusals():
            found = ops.read_text(root, path, offset=offset, limit=limit, limits=limits)
        text = found.content
        if found.truncated:
            text += f"\n[... lines {found.end_line + 1}-{found.total_lines} not shown]"
        return _result(found, text)


def _add_write(server: MCPServer, root: Path) -> None:
    annotations = ToolAnnotations(
        read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
    )

    @server.tool(name="write", title="Write text file", annotations=annotations)
    def write(
        path: PathArg, content: Annotated[str, Field(description="The file's whole new text.")]
    ) -> Annotated[CallToolResult, WriteResult]:
        """Create or overwrite a UTF-8 text file, creating missing parent directories."""
        with _refusals():
            done = ops.write_text(root, path, content)
        verb = "Created" if done.created else "Overwrote"
        return _result(done, f"{verb} {done.path} ({done.bytes_written} bytes).")


def _add_edit(server: MCPServer, root: Path, limits: Limits) -> None:
    annotations = ToolAnnotations(
        read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
    )

    @server.tool(name="edit", title="Edit text file", annotations=annotations)
    def edit(
        path: PathArg, old: OldArg, new: NewArg, replace_all: ReplaceAllArg = False
    ) -> Annotated[CallToolResult, EditResult]:
        """Replace `old` with `new` in a text file. `old` must occur exactly once unless
        `replace_all` is true."""
        with _refusals():
            done = ops.edit_text(root, path, old, new, replace_all=replace_all, limits=limits)
        return _result(
            done, f"Replaced {done.replacements} occurrence(s) in {done.path}.\n{done.diff}"
        )


def _add_search(server: MCPServer, root: Path, limits: Limits) -> None:
    @server.tool(name="search", title="Search files", annotations=_READ_ONLY)
    def search(
        query: Annotated[
            str,
            Field(description="Substring, or an RE2 regex if regex=true."),
        ],
        path: PathArg = ".",
        *,
        regex: Annotated[bool, Field(description="Read the query as an RE2 regex.")] = False,
        case_sensitive: Annotated[
            bool, Field(description="Match letter case exactly (false: ignore case).")
        ] = True,
        glob: Annotated[str | None, Field(description="Only files matching this pattern.")] = None,
        max_results: Annotated[
            int, Field(ge=1, description="Most matching lines to return.")
        ] = 100,
    ) -> Annotated[CallToolResult, SearchResult]:
        """Search text files under a path for matching lines (binary files are skipped). The
        regex engine is linear-time; a search that runs out of time returns what it found."""
        with _refusals():
            found = ops.search(
                root,
                path,
                query,
                regex=regex,
                case_sensitive=case_sensitive,
                glob=glob,
                max_results=max_results,
                limits=limits,
            )
        lines = [f"{m.path}:{m.line}: {m.text}" for m in found.matches]
        if found.timed_out:
            lines.append(TIME_LIMIT_NOTE)
        elif found.truncated:
            lines.append("(more matches not shown)")
        return _result(found, "\n".join(lines) or "No matches.")


def _add_preview(server: MCPServer, root: Path, limits: Limits) -> None:
    @server.tool(name="preview", title="Preview write or edit", annotations=_READ_ONLY)
    def preview(
        path: PathArg,
        content: Annotated[str | None, Field(description="Preview a write of this.")] = None,
        old: Annotated[str | None, Field(description="Preview an edit (with new).")] = None,
        new: Annotated[str | None, Field(description="The edit's replacement (with old).")] = None,
        replace_all: ReplaceAllArg = False,
    ) -> Annotated[CallToolResult, PreviewResult]:
        """Show the unified diff a `write` (give content) or an `edit` (give old and new) would
        make, without changing anything. Fails exactly as the real call would."""
        with _refusals():
            found = plan(
                root,
                path,
                content=content,
                old=old,
                new=new,
                replace_all=replace_all,
                limits=limits,
            )
        return _result(found, found.diff or "No changes.")
