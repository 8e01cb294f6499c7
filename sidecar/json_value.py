"""The type of a value that came as JSON (a tool call's arguments, a server's schema, a strong
agent's report), for fields that carry such data unchanged: precise enough that pyright checks
what is built, unlike `Any`; and the one check such a value needs before it is stored or sent
(`lone_surrogate`)."""

from __future__ import annotations

import re
from typing import TypeAlias, cast

JsonValue: TypeAlias = "bool | int | float | str | list[JsonValue] | dict[str, JsonValue] | None"
JsonObject: TypeAlias = "dict[str, JsonValue]"
JsonPath: TypeAlias = "list[str | int]"

_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(value: object) -> JsonPath | None:
    """Where in a value parsed from JSON (keys included) a string holds a lone UTF-16 surrogate,
    if anywhere ([] for the value itself).

    `"\\ud800"` is legal JSON escape syntax but no text: nothing can encode it as UTF-8 (SQLite,
    the wire, an MCP server's pipe), so such a value is refused where it comes in. The JSON
    decoder joins an escaped pair into one character, so a surrogate left in a string is alone.
    """
    stack: list[tuple[JsonPath, object]] = [([], value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return where
        elif isinstance(item, dict):
            for key, child in cast(dict[str, object], item).items():
                if _SURROGATE.search(key):
                    return [*where, key]
                stack.append(([*where, key], child))
        elif isinstance(item, list):
            stack.extend(([*where, i], child) for i, child in enumerate(cast(list[object], item)))
    return None
