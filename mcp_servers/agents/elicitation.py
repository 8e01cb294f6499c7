"""A CLI's permission request as an MCP form elicitation, and the client's answer as a decision.

A tool request becomes a form with one optional string field, `updated_input`, prefilled with
the tool input as JSON: accept runs the tool (with the edited input if the author changed it),
decline or cancel denies it. An AskUserQuestion request becomes one select field per question
(`q0`, `q1`, ...); accept answers with the chosen labels. The schemas use only the primitive
field shapes the MCP spec allows in elicitation forms.
"""

from __future__ import annotations

import json
from typing import Any

from mcp.types import ElicitResult
from pydantic import JsonValue

from mcp_servers.agents.events import PermissionRequest, Question
from mcp_servers.agents.requests import AllowTool, AnswerQuestion, DenyTool, PermissionDecision

INPUT_FIELD = "updated_input"
DECLINED_MESSAGE = "The author denied this tool use."
DISMISSED_MESSAGE = "The author dismissed the permission request without answering."
UNANSWERABLE_MESSAGE = "Nobody can answer: the MCP client does not support elicitation."
_MAX_INPUT_PREVIEW = 4000


def elicitation_message(request: PermissionRequest, provider_title: str) -> str:
    """The text shown to the author above the form."""
    if request.kind == "question":
        questions = "\n".join(f"- {q.question}" for q in request.questions)
        return f"{provider_title} asks you:\n{questions}"
    about = f": {request.description}" if request.description else ""
    shown = _input_json(request.input)
    if len(shown) > _MAX_INPUT_PREVIEW:
        shown = shown[:_MAX_INPUT_PREVIEW] + " …"
    return f"{provider_title} wants to use {request.tool_name}{about}\nInput: {shown}"


def elicitation_schema(request: PermissionRequest) -> dict[str, Any]:
    """The `requestedSchema` of the form for `request`."""
    if request.kind == "question" and request.questions:
        properties = {
            _field(index): _question_field(question)
            for index, question in enumerate(request.questions)
        }
        return {"type": "object", "properties": properties, "required": list(properties)}
    field = {
        "type": "string",
        "title": f"{request.tool_name} input (JSON)",
        "description": "Accept to run the tool; edit this JSON object to run it with changes.",
        "default": _input_json(request.input),
    }
    return {"type": "object", "properties": {INPUT_FIELD: field}}


def decision_from(request: PermissionRequest, answer: ElicitResult) -> PermissionDecision:
    """The controller decision for the client's elicitation answer.

    Decline denies; cancel (dismissed) denies too. An accepted tool request whose edited input
    is not a JSON object is denied rather than run with an input the author did not mean.
    """
    if answer.action == "decline":
        return DenyTool(message=DECLINED_MESSAGE)
    if answer.action != "accept":
        return DenyTool(message=DISMISSED_MESSAGE)
    content: dict[str, Any] = dict(answer.content or {})
    if request.kind == "question" and request.questions:
        return _answers(request.questions, content)
    return _allow(request, content.get(INPUT_FIELD))


def _allow(request: PermissionRequest, edited: object) -> PermissionDecision:
    if edited is None or (isinstance(edited, str) and not edited.strip()):
        return AllowTool()
    try:
        value: JsonValue = json.loads(edited) if isinstance(edited, str) else None
    except ValueError:
        value = None
    if not isinstance(value, dict):
        return DenyTool(message="The author's edited tool input was not a JSON object.")
    if value == request.input:
        return AllowTool()
    return AllowTool(updated_input=value)


def _answers(questions: tuple[Question, ...], content: dict[str, Any]) -> PermissionDecision:
    answers: dict[str, str] = {}
    for index, question in enumerate(questions):
        chosen = content.get(_field(index))
        if isinstance(chosen, list):
            picked = [str(label) for label in chosen]  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
            answers[question.question] = ", ".join(picked)
        elif chosen is not None:
            answers[question.question] = str(chosen)
    if not answers:
        return DenyTool(message=DISMISSED_MESSAGE)
    return AnswerQuestion(answers=answers)


def _question_field(question: Question) -> dict[str, Any]:
    field: dict[str, Any] = {"title": question.header or question.question}
    field["description"] = question.question
    labels = list(question.options)
    if question.multi_select and labels:
        field.update({"type": "array", "items": {"type": "string", "enum": labels}})
    elif labels:
        field.update({"type": "string", "enum": labels})
    else:
        field["type"] = "string"
    return field


def _field(index: int) -> str:
    return f"q{index}"


def _input_json(value: dict[str, JsonValue]) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)
