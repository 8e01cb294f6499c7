"""What a pydantic `ValidationError` says, in the author's terms: the field and the problem.

`str(ValidationError)` is several lines per problem with the input echoed and a link to
pydantic's documentation; an error message the author or the model reads should instead be one
line such as `thread_id: field required; limit: input should be greater than 0`. Used wherever
such an error becomes the message of a JSON-RPC error or of a failed tool call: by the built-in
servers (`serving`) for a tool's arguments, and by the sidecar (its JSON-RPC errors, and the
host's reasons for a server reply it refuses). It lives here, like `redaction`, because the
servers may not import the sidecar.
"""

from __future__ import annotations

from pydantic import ValidationError

__all__ = ["describe"]


def describe(exc: ValidationError, *, limit: int = 3) -> str:
    """One line naming each distinct problem (at most `limit`, then how many more).

    A problem reads `<field path>: <message>`, the path dotted (`content.0.text`), without the
    names pydantic adds for the members of a union (`TextContent`, `function-after[...]`). A
    value that fits no member of a union is described by the first member's problems only: the
    others are alternatives, not further faults.
    """
    problems: list[str] = []
    first_member: dict[tuple[str | int, ...], str | int] = {}
    for error in exc.errors(include_url=False, include_context=False, include_input=False):
        loc = tuple(error["loc"])
        if not _first_member(loc, first_member):
            continue
        where = ".".join(str(part) for part in loc if not _union_member(part))
        message = _sentence(error["msg"])
        problem = f"{where}: {message}" if where else message
        if problem not in problems:
            problems.append(problem)
    if not problems:
        return "the value is not valid"
    shown = "; ".join(problems[:limit])
    more = len(problems) - limit
    return shown + (f" (and {more} more)" if more > 0 else "")


def _first_member(loc: tuple[str | int, ...], seen: dict[tuple[str | int, ...], str | int]) -> bool:
    """Whether every union along `loc` is at the first member tried there (remembered in
    `seen`, keyed by the path before the member)."""
    for index, part in enumerate(loc):
        if _union_member(part) and seen.setdefault(loc[:index], part) != part:
            return False
    return True


def _union_member(part: str | int) -> bool:
    """A location step that names a union member's type, not a field: a model name
    (`TextContent`) or a validator's (`function-after[...]`, `literal['a']`)."""
    return isinstance(part, str) and (part[:1].isupper() or "[" in part)


def _sentence(message: str) -> str:
    """pydantic's message as part of a sentence: first letter lowercase, one line."""
    flat = " ".join(message.split())
    return flat[:1].lower() + flat[1:]
