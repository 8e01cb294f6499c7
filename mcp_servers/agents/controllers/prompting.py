"""Helpers shared by controllers: prompt text with attachments, environment hygiene."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from mcp_servers.agents.requests import Attachment


def compose_prompt(instruction: str, attachments: Iterable[Attachment]) -> str:
    """The instruction followed by a list of attached file paths (absolute where possible).

    Controllers that can send images natively pass only the non-image attachments here.
    """
    paths = [str(a.path if a.path.is_absolute() else a.path.resolve()) for a in attachments]
    if not paths:
        return instruction
    listing = "\n".join(f"- {path}" for path in paths)
    return f"{instruction}\n\nAttached files:\n{listing}"


def without_prefixes(
    env: Mapping[str, str], names: Iterable[str], prefixes: Iterable[str]
) -> dict[str, str]:
    """`env` minus the exact `names` and every key starting with one of `prefixes`."""
    drop = set(names)
    starts = tuple(prefixes)
    return {k: v for k, v in env.items() if k not in drop and not k.startswith(starts)}
