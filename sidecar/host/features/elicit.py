"""Elicitation → a `form` interrupt, and the author's answer → an `ElicitResult`.

The requested schema is a flat object of primitive properties (the spec's restricted subset);
the desktop builds the form from it. The answer is checked against the same schema before it is
accepted, so a server never receives content its own schema rejects.
"""

from __future__ import annotations

import math
from typing import Any, cast

from sidecar.host.questions import FormQuestion

STRING_FORMATS = ("email", "uri", "date", "date-time")


def form_payload(server: str, params: Any) -> FormQuestion:
    """The `form` interrupt payload (without id/run) for an elicitation request's params."""
    message = str(getattr(params, "message", ""))
    url = getattr(params, "url", None)
    if url is not None:
        return {
            "kind": "form",
            "title": f"{server} asks you to open a link",
            "body": message,
            "server": server,
            "message": message,
            "requested_schema": {},
            "url": str(url),
        }
    schema = cast(dict[str, Any], getattr(params, "requested_schema", None) or {})
    return {
        "kind": "form",
        "title": f"{server} asks for information",
        "body": message,
        "server": server,
        "message": message,
        "requested_schema": dict(schema),
    }


def with_defaults(schema: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    """An accepted answer with the schema's default filled in for every field it leaves out
    (SEP-1034: the client applies the defaults the server gave); other answers as they are."""
    if answer.get("action") != "accept":
        return answer
    properties = cast(dict[str, Any], schema.get("properties") or {})
    content = cast(dict[str, Any], answer.get("content") or {})
    defaults = {
        name: cast(dict[str, Any], spec)["default"]
        for name, spec in properties.items()
        if isinstance(spec, dict) and "default" in spec and content.get(name) is None
    }
    return {**answer, "content": {**content, **defaults}} if defaults else answer


def check_content(schema: dict[str, Any], content: dict[str, Any] | None) -> str | None:
    """What is wrong with `content` for `schema`, or None if it fits."""
    content = content or {}
    properties = cast(dict[str, Any], schema.get("properties") or {})
    for name in cast(list[str], schema.get("required") or []):
        if content.get(name) in (None, "", []):
            return f"{name!r} is required"
    for name, value in content.items():
        spec = properties.get(name)
        if spec is None:
            return f"{name!r} is not a field of this form"
        if value is None:
            continue
        problem = _check_value(cast(dict[str, Any], spec), value)
        if problem is not None:
            return f"{name!r}: {problem}"
    return None


def enum_values(spec: dict[str, Any]) -> list[str] | None:
    """The allowed values of a single-select enum (`enum`, or `oneOf`/`anyOf` of `const`)."""
    if isinstance(spec.get("enum"), list):
        return [str(v) for v in cast(list[Any], spec["enum"])]
    options = spec.get("oneOf") or spec.get("anyOf")
    if isinstance(options, list):
        return [str(cast(dict[str, Any], o).get("const")) for o in cast(list[Any], options)]
    return None


def _check_value(spec: dict[str, Any], value: Any) -> str | None:
    kind = spec.get("type")
    if kind == "boolean":
        return None if isinstance(value, bool) else "must be true or false"
    if kind in ("number", "integer"):
        return _check_number(spec, value, integer=kind == "integer")
    if kind == "array":
        return _check_multi(spec, value)
    if not isinstance(value, str):
        return "must be text"
    allowed = enum_values(spec)
    if allowed is not None and value not in allowed:
        return f"must be one of {allowed}"
    if "minLength" in spec and len(value) < int(spec["minLength"]):
        return f"must be at least {spec['minLength']} characters"
    if "maxLength" in spec and len(value) > int(spec["maxLength"]):
        return f"must be at most {spec['maxLength']} characters"
    return None


def _check_number(spec: dict[str, Any], value: Any, *, integer: bool) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "must be a number"
    number = float(value)
    if not math.isfinite(number):
        return "must be a finite number"
    if integer and not number.is_integer():
        return "must be a whole number"
    if "minimum" in spec and number < float(spec["minimum"]):
        return f"must be at least {spec['minimum']}"
    if "maximum" in spec and number > float(spec["maximum"]):
        return f"must be at most {spec['maximum']}"
    return None


def _check_multi(spec: dict[str, Any], value: Any) -> str | None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in cast(list[Any], value)):
        return "must be a list of choices"
    chosen = cast(list[str], value)
    allowed = enum_values(cast(dict[str, Any], spec.get("items") or {}))
    if allowed is not None and any(v not in allowed for v in chosen):
        return f"choices must be among {allowed}"
    if "minItems" in spec and len(chosen) < int(spec["minItems"]):
        return f"choose at least {spec['minItems']}"
    if "maxItems" in spec and len(chosen) > int(spec["maxItems"]):
        return f"choose at most {spec['maxItems']}"
    return None


def elicit_result(answer: dict[str, Any], *, url_mode: bool = False) -> Any:
    """The `ElicitResult` for a validated `FormValue` dict (URL mode carries no content)."""
    from mcp import types

    action = answer.get("action", "cancel")
    if action == "accept":
        if url_mode:
            return types.ElicitResult(action="accept")
        content = cast(dict[str, Any], answer.get("content") or {})
        return types.ElicitResult(action="accept", content=content)
    return types.ElicitResult(action="decline" if action == "decline" else "cancel")
