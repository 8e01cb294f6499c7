"""The skills MCP server: list skills, load one's instructions, read its files, run its scripts.

Progressive disclosure: `list` gives names and descriptions (and every problem found); `load`
gives a skill's body, which the host then keeps in the model's context; `read_file` gives one of
its `scripts/`, `references/` or `assets/` files; `run_script` runs a Python script from its
`scripts/` folder with the sandbox's runner and limits (a separate, confined process with a
timeout and a memory cap; the script sees only its own run folder).

The catalog is rescanned when any skills folder or SKILL.md changes (one stat per skill on each
call), so skills added or edited while the app runs are seen at the next call.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from mcp_servers.sandbox.runner import SandboxSettings, run_python
from mcp_servers.serving import build_mcp_server
from mcp_servers.skills.catalog import Skill, SkillRoot, body, scan, signature

SERVER_NAME = "atrium-skills"
MAX_FILE_BYTES = 256 * 1024
SCRIPT_TIMEOUT_S = 30.0

_READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
_RUNS_CODE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)

SkillName = Annotated[str, Field(description="The skill's name, as `list` gives it.")]


class SkillInfo(BaseModel):
    name: str
    description: str
    source: str
    folder: str
    ok: bool
    errors: list[str]
    resources: list[str]


class SkillList(BaseModel):
    skills: list[SkillInfo]


class Catalog:
    """The skills under `roots`, rescanned when their files change (thread-safe)."""

    def __init__(self, roots: Sequence[SkillRoot]) -> None:
        self.roots = list(roots)
        self._lock = threading.Lock()
        self._signature: tuple[tuple[str, int, int], ...] | None = None
        self._skills: list[Skill] = []

    def skills(self) -> list[Skill]:
        with self._lock:
            current = signature(self.roots)
            if current != self._signature:
                self._skills = scan(self.roots)
                self._signature = current
            return list(self._skills)

    def find(self, name: str) -> Skill:
        """The valid skill called `name`.

        Raises:
            ToolError: no such skill, or it has errors.
        """
        for skill in self.skills():
            if skill.name == name and skill.ok:
                return skill
            if skill.name == name:
                raise ToolError(f"skill {name!r} cannot be used: {'; '.join(skill.errors)}")
        raise ToolError(f"no skill named {name!r}")


def info(skill: Skill) -> SkillInfo:
    return SkillInfo(
        name=skill.name,
        description=skill.description,
        source=skill.source,
        folder=str(skill.path),
        ok=skill.ok,
        errors=list(skill.errors),
        resources=list(skill.resources),
    )


def build_server(
    roots: Sequence[SkillRoot], *, sandbox_dir: Path, limits: SandboxSettings | None = None
) -> MCPServer:
    """The skills server over `roots` (precedence order); scripts run under `sandbox_dir`."""
    catalog = Catalog(roots)
    sandbox_dir.mkdir(parents=True, exist_ok=True)
    server = build_mcp_server(
        SERVER_NAME,
        title="Atrium skills",
        instructions=(
            "Reusable ways of working. `list` shows each skill's name and when to use it; "
            "`load` a skill before following it; its files and scripts are reachable by name."
        ),
    )
    _add_list(server, catalog)
    _add_load(server, catalog)
    _add_read_file(server, catalog)
    _add_run_script(server, catalog, sandbox_dir, limits or SandboxSettings())
    return server


def _text(text: str, model: BaseModel | None = None) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=model.model_dump(mode="json") if model is not None else None,
    )


def _add_list(server: MCPServer, catalog: Catalog) -> None:
    @server.tool(name="list", title="List skills", annotations=_READ_ONLY)
    async def list_skills() -> Annotated[CallToolResult, SkillList]:
        """Every skill found, valid or not: name, description, where it lives, problems."""
        skills = await anyio.to_thread.run_sync(catalog.skills)
        found = SkillList(skills=[info(s) for s in skills])
        lines = [_line(s) for s in skills]
        return _text("\n".join(lines) or "No skills are installed.", found)


def _line(skill: Skill) -> str:
    if skill.ok:
        return f"- {skill.name}: {skill.description}"
    return f"- {skill.name} (unusable: {'; '.join(skill.errors)})"


def _add_load(server: MCPServer, catalog: Catalog) -> None:
    @server.tool(name="load", title="Load a skill", annotations=_READ_ONLY)
    async def load(name: SkillName) -> str:
        """The skill's instructions. Load a skill before following it; they stay in view for
        the rest of the turn."""
        skill = await anyio.to_thread.run_sync(catalog.find, name)
        try:
            return await anyio.to_thread.run_sync(body, skill)
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            raise ToolError(f"skill {name!r} cannot be read: {exc}") from exc


def _add_read_file(server: MCPServer, catalog: Catalog) -> None:
    @server.tool(name="read_file", title="Read a skill's file", annotations=_READ_ONLY)
    async def read_file(
        name: SkillName,
        path: Annotated[str, Field(description="Relative to the skill, e.g. references/api.md")],
    ) -> str:
        """One file of a skill's scripts/, references/ or assets/ (text, at most 256 KB)."""
        skill = await anyio.to_thread.run_sync(catalog.find, name)
        if path not in skill.resources:
            raise ToolError(f"skill {name!r} has no file {path!r}; its files: {skill.resources}")
        return await anyio.to_thread.run_sync(_read_text, skill.path, path)


def _read_text(folder: Path, relative: str) -> str:
    target = (folder / relative).resolve()
    if not target.is_relative_to(folder.resolve()):
        raise ToolError(f"{relative!r} leads outside the skill")
    data = target.read_bytes()
    if len(data) > MAX_FILE_BYTES:
        raise ToolError(f"{relative!r} is {len(data):,} bytes (at most {MAX_FILE_BYTES:,})")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(f"{relative!r} is not UTF-8 text") from exc


def _add_run_script(
    server: MCPServer, catalog: Catalog, sandbox_dir: Path, limits: SandboxSettings
) -> None:
    @server.tool(name="run_script", title="Run a skill's script", annotations=_RUNS_CODE)
    async def run_script(
        name: SkillName,
        script: Annotated[str, Field(description="A Python file in the skill's scripts/ folder")],
        args: Annotated[list[str] | None, Field(description="Its command-line arguments")] = None,
        stdin: Annotated[
            str | None, Field(description="Text given to the script on its standard input.")
        ] = None,
    ) -> str:
        """Run one of the skill's Python scripts in the sandbox (time, memory and file limits;
        no network; it sees only its own run folder)."""
        skill = await anyio.to_thread.run_sync(catalog.find, name)
        relative = script if script.startswith("scripts/") else f"scripts/{script}"
        if relative not in skill.resources or not relative.endswith(".py"):
            scripts = [r for r in skill.resources if r.startswith("scripts/")]
            raise ToolError(
                f"skill {name!r} has no Python script {relative!r}; its scripts: {scripts}"
            )
        source = await anyio.to_thread.run_sync(_read_text, skill.path, relative)
        code = f"import sys\nsys.argv = {[relative, *(args or [])]!r}\n" + source
        result = await run_python(
            sandbox_dir,
            code,
            timeout_s=min(SCRIPT_TIMEOUT_S, limits.timeout_s),
            stdin=stdin,
            limits=limits,
        )
        status = "timed out" if result.timed_out else f"exit code {result.exit_code}"
        text = f"{relative} ({status}, {result.duration_s:.2f} s)\n{result.stdout}"
        if result.stderr:
            text += f"\n[stderr]\n{result.stderr}"
        if result.timed_out or result.exit_code != 0:
            raise ToolError(text)
        return text
