"""One filled-in example of every wire model, for round-trip and strictness tests.

Each sample sets optional fields to non-default values where it can, so a round trip that drops
or renames a field shows up as an inequality.
"""

from __future__ import annotations

from sidecar.protocol import (
    ApprovalInterrupt,
    ApprovalValue,
    Empty,
    ErrorInfo,
    InitializeParams,
    InitializeResult,
    InterruptEvent,
    MessageEvent,
    MessageInfo,
    NodeFinished,
    NodeStarted,
    QuestionInterrupt,
    QuestionValue,
    RunCancelled,
    RunEventBody,
    RunFailed,
    RunFinished,
    RunRef,
    RunResumeParams,
    RunStarted,
    RunStartParams,
    SettingsInfo,
    SettingsSetParams,
    ThreadCreateParams,
    ThreadGetParams,
    ThreadGetResult,
    ThreadInfo,
    ThreadListResult,
    ThreadRef,
    ThreadRenamed,
    ThreadRenameParams,
    Token,
    ToolCall,
    ToolCallInfo,
    ToolInfo,
    ToolListResult,
    ToolProgress,
    ToolResult,
    WireModel,
)
from tests.sidecar.protocol.agent_samples import AGENT_SAMPLES
from tests.sidecar.protocol.budget_samples import BUDGET_EVENT_SAMPLES, BUDGET_SAMPLES
from tests.sidecar.protocol.check_samples import CHECK_OTHER_SAMPLES
from tests.sidecar.protocol.feature_samples import (
    FEATURE_OTHER_SAMPLES,
    FEATURE_SAMPLES,
    FORM,
    SAMPLING,
)
from tests.sidecar.protocol.memory_samples import (
    MEMORY_EVENT_SAMPLES,
    MEMORY_OTHER_SAMPLES,
    MEMORY_SAMPLES,
)
from tests.sidecar.protocol.plan_samples import (
    PLAN_EVENT_SAMPLES,
    PLAN_OTHER_SAMPLES,
    PLAN_SAMPLES,
)
from tests.sidecar.protocol.queue_samples import QUEUE_OTHER_SAMPLES, QUEUE_SAMPLES
from tests.sidecar.protocol.routine_samples import ROUTINE_SAMPLES
from tests.sidecar.protocol.server_samples import SERVER_NOTIFICATION_SAMPLES, SERVER_SAMPLES
from tests.sidecar.protocol.skill_samples import SKILL_SAMPLES
from tests.sidecar.protocol.thread_samples import THREAD_HISTORY_SAMPLES
from tests.sidecar.protocol.undo_samples import UNDO_SAMPLES

THREAD = ThreadInfo(
    id="t-1", title="Chapter one", status="interrupted", created_at=1.5, updated_at=2.25
)
TOOL_CALL = ToolCallInfo(
    id="call-1", server="workspace", tool="write", arguments={"path": "a.md", "text": "é\n"}
)
ASSISTANT_MESSAGE = MessageInfo(
    id="m-2",
    thread_id="t-1",
    role="assistant",
    content="Writing the file.",
    created_at=3.0,
    tool_calls=(TOOL_CALL,),
)
TOOL_MESSAGE = MessageInfo(
    id="m-3",
    thread_id="t-1",
    role="tool",
    content="denied",
    created_at=4.0,
    tool_call_id="call-1",
    is_error=True,
)
APPROVAL = ApprovalInterrupt(
    id="i-1",
    title="Write a.md?",
    body="The agent wants to write a file.",
    run_id="r-1",
    server="workspace",
    tool="write",
    arguments={"path": "a.md", "nested": {"list": [1, 2.5, None, True]}},
    call_id="call-1",
    diff="--- a.md\n+++ a.md\n@@ -0,0 +1 @@\n+hello\n",
    uncertain=True,
)
QUESTION = QuestionInterrupt(
    id="i-2",
    title="Which tone?",
    body="",
    question="Formal or casual?",
    choices=("formal", "casual"),
)
TOOL = ToolInfo(
    name="workspace__write",
    server="workspace",
    tool="write",
    description="Write a file.",
    read_only=False,
    destructive=True,
    input_schema={"type": "object", "properties": {"path": {"type": "string"}}},
)

# Every params/result model of METHODS, keyed by class.
METHOD_SAMPLES: dict[type[WireModel], WireModel] = {
    Empty: Empty(),
    InitializeParams: InitializeParams(
        client_name="atrium-desktop", client_version="0.1.0", protocol_version="1.3"
    ),
    InitializeResult: InitializeResult(
        protocol_version="1.0", server_version="0.1.0", data_dir="/data", model_configured=True
    ),
    ThreadCreateParams: ThreadCreateParams(title="Notes"),
    ThreadInfo: THREAD,
    ThreadListResult: ThreadListResult(threads=(THREAD, THREAD.model_copy(update={"id": "t-2"}))),
    ThreadGetParams: ThreadGetParams(thread_id="t-1", limit=20),
    ThreadGetResult: ThreadGetResult(
        thread=THREAD,
        messages=(ASSISTANT_MESSAGE, TOOL_MESSAGE),
        interrupts=(APPROVAL, QUESTION),
        status="failed",
        last_error="model unreachable",
    ),
    ThreadRenameParams: ThreadRenameParams(thread_id="t-1", title="Renamed"),
    ThreadRef: ThreadRef(thread_id="t-1"),
    RunStartParams: RunStartParams(thread_id="t-1", text="Write me a poem ✍️"),
    RunRef: RunRef(run_id="r-1"),
    RunResumeParams: RunResumeParams(
        thread_id="t-1", interrupt_id="i-1", value={"decision": "allow_once"}
    ),
    ToolListResult: ToolListResult(tools=(TOOL,)),
    SettingsInfo: SettingsInfo(
        model="openai/gpt-4o-mini",
        api_base="http://127.0.0.1:8000/v1",
        workspace="/home/author/Atrium",
        has_api_key=True,
        model_source="environment",
    ),
    SettingsSetParams: SettingsSetParams(model="ollama/llama3", api_base=None, api_key=""),
    **SERVER_SAMPLES,
    **FEATURE_SAMPLES,
    **PLAN_SAMPLES,
    **THREAD_HISTORY_SAMPLES,
    **UNDO_SAMPLES,
    **ROUTINE_SAMPLES,
    **SKILL_SAMPLES,
    **AGENT_SAMPLES,
    **MEMORY_SAMPLES,
    **QUEUE_SAMPLES,
    **BUDGET_SAMPLES,
}

# One instance of every member of the run event union.
EVENT_SAMPLES: list[RunEventBody] = [
    RunStarted(resumed=True),
    NodeStarted(node="planner"),
    NodeFinished(node="planner"),
    Token(text="Hel"),
    MessageEvent(message=ASSISTANT_MESSAGE),
    ToolCall(call_id="call-1", server="workspace", tool="write", arguments={"path": "a.md"}),
    ToolProgress(call_id="call-1", progress=3.0, total=10.0, message="copying"),
    ToolResult(call_id="call-1", is_error=False, content="ok"),
    InterruptEvent(interrupt=APPROVAL),
    InterruptEvent(interrupt=QUESTION),
    InterruptEvent(interrupt=FORM),
    InterruptEvent(interrupt=SAMPLING),
    RunFinished(outcome="interrupted"),
    RunFailed(error=ErrorInfo(code="node_error", message="planner failed")),
    RunCancelled(),
    ThreadRenamed(title="Plan the garden for spring"),
    *PLAN_EVENT_SAMPLES,
    *MEMORY_EVENT_SAMPLES,
    *BUDGET_EVENT_SAMPLES,
]

# Models that cross the wire outside METHODS: resume values and nested records.
OTHER_SAMPLES: list[WireModel] = [
    ApprovalValue(decision="allow_thread", reason="trusted file"),
    QuestionValue(answer="formal"),
    ErrorInfo(code="x", message="y"),
    TOOL_CALL,
    TOOL,
    ASSISTANT_MESSAGE,
    TOOL_MESSAGE,
    APPROVAL,
    QUESTION,
    *SERVER_NOTIFICATION_SAMPLES,
    *FEATURE_OTHER_SAMPLES,
    *PLAN_OTHER_SAMPLES,
    *QUEUE_OTHER_SAMPLES,
    *CHECK_OTHER_SAMPLES,
    *MEMORY_OTHER_SAMPLES,
]
