"""Samples of the client-feature wire models (merged into `samples.METHOD_SAMPLES`) and of the
live interrupt kinds (`form`, `sampling`) with their resume values."""

from __future__ import annotations

from sidecar.protocol import (
    FeaturesEmpty,
    FormInterrupt,
    FormValue,
    PromptArgumentInfo,
    PromptGetParams,
    PromptGetResult,
    PromptInfo,
    PromptListParams,
    PromptListResult,
    PromptMessageInfo,
    ResourceAttachResult,
    ResourceContent,
    ResourceInfo,
    ResourceListParams,
    ResourceListResult,
    ResourceReadResult,
    ResourceRef,
    ResourceSubscribeParams,
    ResourceTemplateInfo,
    SamplingInterrupt,
    SamplingMessageInfo,
    SamplingValue,
    ServerLogEntry,
    ServerLogListParams,
    ServerLogListResult,
    ServerLogSetLevelParams,
    ServerLogSetLevelResult,
    WireModel,
)

FORM = FormInterrupt(
    id="i-3",
    title="everything asks for information",
    body="Please provide inputs",
    run_id="r-1",
    live=True,
    server="everything",
    message="Please provide inputs",
    requested_schema={
        "type": "object",
        "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
        "required": ["name"],
    },
    url="https://example.invalid/consent",
    call_id="call-2",
)
SAMPLING = SamplingInterrupt(
    id="i-4",
    title="everything asks to use your model",
    body="",
    run_id="r-1",
    live=True,
    server="everything",
    messages=(
        SamplingMessageInfo(role="user", text="Summarise ✍️"),
        SamplingMessageInfo(role="assistant", text="Sure."),
    ),
    system_prompt="You are a helpful test server.",
    max_tokens=100,
    temperature=0.7,
    stop_sequences=("END",),
    model_hints=("claude",),
    call_id="call-3",
)
LOG_ENTRY = ServerLogEntry(
    seq=3, time=1.5, level="warning", logger="everything", text="disk low", source="host"
)
RESOURCE = ResourceInfo(
    server="everything",
    uri="demo://resource/static/document/architecture.md",
    name="architecture.md",
    title="Architecture",
    description="How it is built",
    mime_type="text/markdown",
    size=1604,
)
TEMPLATE = ResourceTemplateInfo(
    server="everything",
    uri_template="demo://resource/dynamic/text/{resourceId}",
    name="Dynamic text",
    title="Dynamic",
    description="Made up on demand",
    mime_type="text/plain",
)
PROMPT = PromptInfo(
    server="everything",
    name="args-prompt",
    title="Args",
    description="A prompt with arguments",
    arguments=(PromptArgumentInfo(name="city", description="A city", required=True),),
    command="/everything:args-prompt",
)

FEATURE_SAMPLES: dict[type[WireModel], WireModel] = {
    ServerLogListParams: ServerLogListParams(
        server="everything", min_level="notice", after_seq=2, limit=50
    ),
    ServerLogListResult: ServerLogListResult(
        server="everything", level="debug", entries=(LOG_ENTRY,), dropped=7
    ),
    ServerLogSetLevelParams: ServerLogSetLevelParams(server="everything", level="error"),
    ServerLogSetLevelResult: ServerLogSetLevelResult(
        server="everything", level="error", applied="next_connection"
    ),
    ResourceListParams: ResourceListParams(server="everything"),
    ResourceListResult: ResourceListResult(resources=(RESOURCE,), templates=(TEMPLATE,)),
    ResourceRef: ResourceRef(server="everything", uri=RESOURCE.uri),
    ResourceReadResult: ResourceReadResult(
        server="everything",
        uri=RESOURCE.uri,
        contents=(
            ResourceContent(uri=RESOURCE.uri, mime_type="text/markdown", text="# Architecture"),
            ResourceContent(uri=RESOURCE.uri, mime_type="image/png", blob_bytes=68),
        ),
    ),
    ResourceAttachResult: ResourceAttachResult(
        server="everything", uri=RESOURCE.uri, text="<resource>…</resource>", truncated=True
    ),
    ResourceSubscribeParams: ResourceSubscribeParams(
        server="everything", uri=RESOURCE.uri, subscribe=False
    ),
    FeaturesEmpty: FeaturesEmpty(),
    PromptListParams: PromptListParams(server="everything"),
    PromptListResult: PromptListResult(prompts=(PROMPT,)),
    PromptGetParams: PromptGetParams(
        server="everything", name="args-prompt", arguments={"city": "Paris"}
    ),
    PromptGetResult: PromptGetResult(
        server="everything",
        name="args-prompt",
        description="Weather",
        messages=(PromptMessageInfo(role="user", text="What's the weather in Paris?"),),
        text="What's the weather in Paris?",
    ),
}

FEATURE_OTHER_SAMPLES: list[WireModel] = [
    FORM,
    SAMPLING,
    FormValue(action="accept", content={"name": "Ada", "age": 36, "ok": True, "tags": ["a"]}),
    SamplingValue(decision="deny", reason="not now"),
    LOG_ENTRY,
    RESOURCE,
    TEMPLATE,
    PROMPT,
]
