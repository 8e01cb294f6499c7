"""The type of a value that came as JSON (a tool call's arguments, a server's schema, a strong
agent's report), for fields that carry such data unchanged: precise enough that pyright checks
what is built, unlike `Any`."""

from __future__ import annotations

from typing import TypeAlias

JsonValue: TypeAlias = "bool | int | float | str | list[JsonValue] | dict[str, JsonValue] | None"
JsonObject: TypeAlias = "dict[str, JsonValue]"
