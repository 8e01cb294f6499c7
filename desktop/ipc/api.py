"""`SidecarApi`: the typed face of the wire protocol, one method per wire method.

Built from `sidecar.protocol.METHODS`: each method is named for its wire method (`/` as `_`:
`thread/set_budget` is `thread_set_budget`), takes the method's params model (nothing when the
model has no fields) and returns a `PendingRequest` typed with its result model, so a field or
result renamed on the wire fails type checks where the desktop uses it. Like `RpcClient` it
never waits: the handle completes later, on the thread that completes it (the GUI thread).
Every request the desktop sends goes through here; `tests/desktop/ipc/test_api.py` holds this
class to `METHODS` (a method for every wire method, and none for a method the wire lacks).
"""

from __future__ import annotations

from desktop.ipc.pending import PendingRequest, RequestSender
from sidecar.protocol import (
    AGENTS_PROVIDERS,
    AUTOMATION_GET,
    AUTOMATION_SET,
    GRANT_LIST,
    GRANT_REVOKE,
    HEARTBEAT_HISTORY,
    HEARTBEAT_RUN_NOW,
    IDENTITY_GET,
    IDENTITY_SET,
    INITIALIZE,
    MEMORY_EVENTS,
    MEMORY_FORGET,
    MEMORY_LIST,
    MEMORY_UPDATE,
    MEMORY_WRITE,
    PING,
    PLAN_CANCEL,
    PLAN_GET,
    PLAN_LIST,
    PLAN_PAUSE,
    PLAN_RESUME,
    PROFILE_LIST,
    PROFILE_SET,
    PROMPT_GET,
    PROMPT_LIST,
    QUEUE_EDIT,
    QUEUE_LIST,
    QUEUE_SET_MODE,
    QUEUE_WITHDRAW,
    RESOURCE_ATTACH,
    RESOURCE_LIST,
    RESOURCE_READ,
    RESOURCE_SUBSCRIBE,
    ROUTINE_LIST,
    ROUTINE_SAVE,
    RUN_CANCEL,
    RUN_RESUME,
    RUN_RETRY,
    RUN_START,
    SCHEDULE_CREATE,
    SCHEDULE_DELETE,
    SCHEDULE_HISTORY,
    SCHEDULE_LIST,
    SCHEDULE_PAUSE,
    SCHEDULE_RESUME,
    SCHEDULE_RUN_NOW,
    SCHEDULE_UPDATE,
    SERVER_ADD,
    SERVER_IMPORT,
    SERVER_LIST,
    SERVER_LOG_LIST,
    SERVER_LOG_SET_LEVEL,
    SERVER_LOGS,
    SERVER_PREVIEW,
    SERVER_REMOVE,
    SERVER_RESTART,
    SERVER_SET_ENABLED,
    SERVER_SET_SECRET,
    SERVER_TEST,
    SERVER_UPDATE,
    SETTINGS_GET,
    SETTINGS_SET,
    SHUTDOWN,
    SKILLS_LIST,
    SKILLS_READ,
    TASK_CANCEL,
    TASK_ENVELOPES,
    TASK_EVENTS,
    TASK_MESSAGE,
    TASK_RETRY,
    THREAD_BUDGET,
    THREAD_CHECKPOINTS,
    THREAD_COMPACTION,
    THREAD_CREATE,
    THREAD_DELETE,
    THREAD_EXPORT,
    THREAD_FORK,
    THREAD_GET,
    THREAD_LIST,
    THREAD_MESSAGES,
    THREAD_RENAME,
    THREAD_REWIND,
    THREAD_SEARCH,
    THREAD_SET_AUTONOMOUS,
    THREAD_SET_BUDGET,
    THREAD_USAGE,
    TOOL_LIST,
    AgentProvidersResult,
    AgentsEmpty,
    AutomationInfo,
    AutomationSetParams,
    AutonomousParams,
    CompactionParams,
    CompactionResult,
    CoordEmpty,
    Done,
    Empty,
    FeaturesEmpty,
    GrantListResult,
    GrantRevokeParams,
    HeartbeatBeat,
    HeartbeatHistoryResult,
    IdentityFileInfo,
    IdentityGetParams,
    IdentityGetResult,
    IdentitySetParams,
    InitializeParams,
    InitializeResult,
    LaunchPreviewInfo,
    MemoryEventsParams,
    MemoryEventsResult,
    MemoryInfo,
    MemoryKeyParams,
    MemoryListParams,
    MemoryListResult,
    MemoryUpdateParams,
    MemoryWriteParams,
    PlanControlResult,
    PlanGetParams,
    PlanGetResult,
    PlanListParams,
    PlanListResult,
    PlanRef,
    ProfileListResult,
    ProfileSetParams,
    PromptGetParams,
    PromptGetResult,
    PromptListParams,
    PromptListResult,
    QueuedMessageInfo,
    QueueEditParams,
    QueueEmpty,
    QueueListParams,
    QueueListResult,
    QueueModeParams,
    QueueRef,
    ResourceAttachResult,
    ResourceListParams,
    ResourceListResult,
    ResourceReadResult,
    ResourceRef,
    ResourceSubscribeParams,
    RoutineEmpty,
    RoutineInfo,
    RoutineListResult,
    RoutineSaveParams,
    RunRef,
    RunResumeParams,
    RunStartParams,
    ScheduleCreateParams,
    ScheduleHistoryResult,
    ScheduleInfo,
    ScheduleListResult,
    ScheduleRef,
    ScheduleRunResult,
    ScheduleUpdateParams,
    SecretSetParams,
    ServerConfigParams,
    ServerImportParams,
    ServerImportResult,
    ServerInfo,
    ServerListResult,
    ServerLogListParams,
    ServerLogListResult,
    ServerLogSetLevelParams,
    ServerLogSetLevelResult,
    ServerLogsParams,
    ServerLogsResult,
    ServerPreviewParams,
    ServerRef,
    ServerSetEnabledParams,
    ServerTestResult,
    SettingsInfo,
    SettingsSetParams,
    SkillListResult,
    SkillReadParams,
    SkillReadResult,
    SkillsEmpty,
    TaskEnvelopesResult,
    TaskEventsParams,
    TaskEventsResult,
    TaskMessageParams,
    TaskMessageResult,
    TaskRef,
    TaskRetryResult,
    ThreadBudgetParams,
    ThreadBudgetResult,
    ThreadCheckpointsParams,
    ThreadCheckpointsResult,
    ThreadCreateParams,
    ThreadExportParams,
    ThreadExportResult,
    ThreadForkParams,
    ThreadForkResult,
    ThreadGetParams,
    ThreadGetResult,
    ThreadInfo,
    ThreadListResult,
    ThreadMessagesParams,
    ThreadMessagesResult,
    ThreadRef,
    ThreadRenameParams,
    ThreadRewindParams,
    ThreadRewindResult,
    ThreadSearchParams,
    ThreadSearchResult,
    ThreadSetBudgetParams,
    ThreadUsageParams,
    ThreadUsageResult,
    ToolListResult,
)


class SidecarApi:
    """Typed requests over a `RequestSender` (the `RpcClient`, or a fake in tests)."""

    def __init__(self, sender: RequestSender) -> None:
        self._sender = sender

    def initialize(self, params: InitializeParams) -> PendingRequest[InitializeResult]:
        """Handshake; first request."""
        return self._sender.request(INITIALIZE, params)

    def ping(self) -> PendingRequest[Empty]:
        """Liveness check."""
        return self._sender.request(PING, Empty())

    def shutdown(self) -> PendingRequest[Empty]:
        """Stop runs, close servers, exit after replying."""
        return self._sender.request(SHUTDOWN, Empty())

    def thread_create(self, params: ThreadCreateParams) -> PendingRequest[ThreadInfo]:
        """Create a thread."""
        return self._sender.request(THREAD_CREATE, params)

    def thread_list(self) -> PendingRequest[ThreadListResult]:
        """All threads, newest first."""
        return self._sender.request(THREAD_LIST, Empty())

    def thread_get(self, params: ThreadGetParams) -> PendingRequest[ThreadGetResult]:
        """A thread with its history."""
        return self._sender.request(THREAD_GET, params)

    def thread_rename(self, params: ThreadRenameParams) -> PendingRequest[ThreadInfo]:
        """Rename a thread."""
        return self._sender.request(THREAD_RENAME, params)

    def thread_delete(self, params: ThreadRef) -> PendingRequest[Empty]:
        """Delete a thread and everything under it."""
        return self._sender.request(THREAD_DELETE, params)

    def thread_messages(self, params: ThreadMessagesParams) -> PendingRequest[ThreadMessagesResult]:
        """A page of a thread's messages (seq cursor)."""
        return self._sender.request(THREAD_MESSAGES, params)

    def thread_search(self, params: ThreadSearchParams) -> PendingRequest[ThreadSearchResult]:
        """Full-text search over a thread's messages."""
        return self._sender.request(THREAD_SEARCH, params)

    def thread_budget(self, params: ThreadBudgetParams) -> PendingRequest[ThreadBudgetResult]:
        """The thread's budget and what it spent."""
        return self._sender.request(THREAD_BUDGET, params)

    def thread_set_budget(
        self, params: ThreadSetBudgetParams
    ) -> PendingRequest[ThreadBudgetResult]:
        """Set, change or remove the thread's budget."""
        return self._sender.request(THREAD_SET_BUDGET, params)

    def thread_compaction(self, params: CompactionParams) -> PendingRequest[CompactionResult]:
        """A thread's compaction setting, channel, summaries."""
        return self._sender.request(THREAD_COMPACTION, params)

    def thread_usage(self, params: ThreadUsageParams) -> PendingRequest[ThreadUsageResult]:
        """Tokens and cost per turn and for the thread."""
        return self._sender.request(THREAD_USAGE, params)

    def thread_export(self, params: ThreadExportParams) -> PendingRequest[ThreadExportResult]:
        """The thread as Markdown or JSON, with usage."""
        return self._sender.request(THREAD_EXPORT, params)

    def thread_set_autonomous(self, params: AutonomousParams) -> PendingRequest[CoordEmpty]:
        """Let plans run without plan approval."""
        return self._sender.request(THREAD_SET_AUTONOMOUS, params)

    def thread_checkpoints(
        self, params: ThreadCheckpointsParams
    ) -> PendingRequest[ThreadCheckpointsResult]:
        """The thread's turns, oldest first."""
        return self._sender.request(THREAD_CHECKPOINTS, params)

    def thread_rewind(self, params: ThreadRewindParams) -> PendingRequest[ThreadRewindResult]:
        """Rewind (or redo) messages and files to a turn."""
        return self._sender.request(THREAD_REWIND, params)

    def thread_fork(self, params: ThreadForkParams) -> PendingRequest[ThreadForkResult]:
        """A new thread with the history up to a turn."""
        return self._sender.request(THREAD_FORK, params)

    def run_start(self, params: RunStartParams) -> PendingRequest[RunRef]:
        """Start a turn with an author message."""
        return self._sender.request(RUN_START, params)

    def run_resume(self, params: RunResumeParams) -> PendingRequest[RunRef]:
        """Answer a pending interrupt."""
        return self._sender.request(RUN_RESUME, params)

    def run_retry(self, params: ThreadRef) -> PendingRequest[RunRef]:
        """Continue a failed or cancelled turn."""
        return self._sender.request(RUN_RETRY, params)

    def run_cancel(self, params: ThreadRef) -> PendingRequest[Empty]:
        """Cancel the thread's running turn."""
        return self._sender.request(RUN_CANCEL, params)

    def tool_list(self) -> PendingRequest[ToolListResult]:
        """Tools the agent can use."""
        return self._sender.request(TOOL_LIST, Empty())

    def settings_get(self) -> PendingRequest[SettingsInfo]:
        """Current settings."""
        return self._sender.request(SETTINGS_GET, Empty())

    def settings_set(self, params: SettingsSetParams) -> PendingRequest[SettingsInfo]:
        """Change settings."""
        return self._sender.request(SETTINGS_SET, params)

    def server_list(self) -> PendingRequest[ServerListResult]:
        """Every server with its status."""
        return self._sender.request(SERVER_LIST, Done())

    def server_add(self, params: ServerConfigParams) -> PendingRequest[ServerInfo]:
        """Add a server to mcp.json; start it."""
        return self._sender.request(SERVER_ADD, params)

    def server_update(self, params: ServerConfigParams) -> PendingRequest[ServerInfo]:
        """Change a server; reconnect it."""
        return self._sender.request(SERVER_UPDATE, params)

    def server_remove(self, params: ServerRef) -> PendingRequest[Done]:
        """Stop a server and remove it from mcp.json."""
        return self._sender.request(SERVER_REMOVE, params)

    def server_set_enabled(self, params: ServerSetEnabledParams) -> PendingRequest[ServerInfo]:
        """Enable or disable."""
        return self._sender.request(SERVER_SET_ENABLED, params)

    def server_restart(self, params: ServerRef) -> PendingRequest[ServerInfo]:
        """Reconnect one server now."""
        return self._sender.request(SERVER_RESTART, params)

    def server_logs(self, params: ServerLogsParams) -> PendingRequest[ServerLogsResult]:
        """Stderr tail, protocol log."""
        return self._sender.request(SERVER_LOGS, params)

    def server_preview(self, params: ServerPreviewParams) -> PendingRequest[LaunchPreviewInfo]:
        """Launch preview."""
        return self._sender.request(SERVER_PREVIEW, params)

    def server_test(self, params: ServerConfigParams) -> PendingRequest[ServerTestResult]:
        """Connect once, not added."""
        return self._sender.request(SERVER_TEST, params)

    def server_import(self, params: ServerImportParams) -> PendingRequest[ServerImportResult]:
        """Import another host's."""
        return self._sender.request(SERVER_IMPORT, params)

    def server_set_secret(self, params: SecretSetParams) -> PendingRequest[Done]:
        """Store a secret in the OS keyring."""
        return self._sender.request(SERVER_SET_SECRET, params)

    def grant_list(self) -> PendingRequest[GrantListResult]:
        """Every standing approval, across threads."""
        return self._sender.request(GRANT_LIST, Done())

    def grant_revoke(self, params: GrantRevokeParams) -> PendingRequest[Done]:
        """Revoke a standing approval."""
        return self._sender.request(GRANT_REVOKE, params)

    def server_log_list(self, params: ServerLogListParams) -> PendingRequest[ServerLogListResult]:
        """A server's recent log notifications."""
        return self._sender.request(SERVER_LOG_LIST, params)

    def server_log_set_level(
        self, params: ServerLogSetLevelParams
    ) -> PendingRequest[ServerLogSetLevelResult]:
        """Set the log level asked of a server."""
        return self._sender.request(SERVER_LOG_SET_LEVEL, params)

    def resource_list(self, params: ResourceListParams) -> PendingRequest[ResourceListResult]:
        """Resources and templates of connected servers."""
        return self._sender.request(RESOURCE_LIST, params)

    def resource_read(self, params: ResourceRef) -> PendingRequest[ResourceReadResult]:
        """Read one resource."""
        return self._sender.request(RESOURCE_READ, params)

    def resource_attach(self, params: ResourceRef) -> PendingRequest[ResourceAttachResult]:
        """A resource as text to include in a message."""
        return self._sender.request(RESOURCE_ATTACH, params)

    def resource_subscribe(self, params: ResourceSubscribeParams) -> PendingRequest[FeaturesEmpty]:
        """Follow (or stop following) a resource's updates."""
        return self._sender.request(RESOURCE_SUBSCRIBE, params)

    def prompt_list(self, params: PromptListParams) -> PendingRequest[PromptListResult]:
        """Prompts of connected servers."""
        return self._sender.request(PROMPT_LIST, params)

    def prompt_get(self, params: PromptGetParams) -> PendingRequest[PromptGetResult]:
        """Expand a prompt with arguments."""
        return self._sender.request(PROMPT_GET, params)

    def profile_list(self) -> PendingRequest[ProfileListResult]:
        """Subagent profiles."""
        return self._sender.request(PROFILE_LIST, CoordEmpty())

    def profile_set(self, params: ProfileSetParams) -> PendingRequest[ProfileListResult]:
        """Replace the profiles."""
        return self._sender.request(PROFILE_SET, params)

    def plan_get(self, params: PlanGetParams) -> PendingRequest[PlanGetResult]:
        """The thread's plans and tasks."""
        return self._sender.request(PLAN_GET, params)

    def plan_pause(self, params: PlanRef) -> PendingRequest[PlanControlResult]:
        """Stop a running plan's work until it is resumed."""
        return self._sender.request(PLAN_PAUSE, params)

    def plan_resume(self, params: PlanRef) -> PendingRequest[PlanControlResult]:
        """Go on with a paused plan, its agents where they stopped."""
        return self._sender.request(PLAN_RESUME, params)

    def plan_cancel(self, params: PlanRef) -> PendingRequest[PlanControlResult]:
        """End a running or paused plan; finished tasks stay."""
        return self._sender.request(PLAN_CANCEL, params)

    def task_message(self, params: TaskMessageParams) -> PendingRequest[TaskMessageResult]:
        """A word from the author to a running task."""
        return self._sender.request(TASK_MESSAGE, params)

    def task_cancel(self, params: TaskRef) -> PendingRequest[CoordEmpty]:
        """Stop a running task (its dependents skip)."""
        return self._sender.request(TASK_CANCEL, params)

    def task_retry(self, params: TaskRef) -> PendingRequest[TaskRetryResult]:
        """Run a failed or cancelled task again."""
        return self._sender.request(TASK_RETRY, params)

    def plan_list(self, params: PlanListParams) -> PendingRequest[PlanListResult]:
        """Plans of every thread."""
        return self._sender.request(PLAN_LIST, params)

    def task_events(self, params: TaskEventsParams) -> PendingRequest[TaskEventsResult]:
        """What the task's agent did."""
        return self._sender.request(TASK_EVENTS, params)

    def task_envelopes(self, params: TaskRef) -> PendingRequest[TaskEnvelopesResult]:
        """What the task's agents sent and were sent, whole."""
        return self._sender.request(TASK_ENVELOPES, params)

    def routine_save(self, params: RoutineSaveParams) -> PendingRequest[RoutineInfo]:
        """Save a completed plan as a routine."""
        return self._sender.request(ROUTINE_SAVE, params)

    def routine_list(self) -> PendingRequest[RoutineListResult]:
        """The workspace's routines."""
        return self._sender.request(ROUTINE_LIST, RoutineEmpty())

    def skills_list(self) -> PendingRequest[SkillListResult]:
        """Every skill folder found, each with its problems."""
        return self._sender.request(SKILLS_LIST, SkillsEmpty())

    def skills_read(self, params: SkillReadParams) -> PendingRequest[SkillReadResult]:
        """A listed skill's body."""
        return self._sender.request(SKILLS_READ, params)

    def queue_list(self, params: QueueListParams) -> PendingRequest[QueueListResult]:
        """The thread's queued messages."""
        return self._sender.request(QUEUE_LIST, params)

    def queue_edit(self, params: QueueEditParams) -> PendingRequest[QueuedMessageInfo]:
        """Edit a not yet delivered one."""
        return self._sender.request(QUEUE_EDIT, params)

    def queue_withdraw(self, params: QueueRef) -> PendingRequest[QueuedMessageInfo]:
        """Withdraw a not yet delivered one."""
        return self._sender.request(QUEUE_WITHDRAW, params)

    def queue_set_mode(self, params: QueueModeParams) -> PendingRequest[QueueEmpty]:
        """The thread's default mode."""
        return self._sender.request(QUEUE_SET_MODE, params)

    def schedule_list(self) -> PendingRequest[ScheduleListResult]:
        """Every schedule."""
        return self._sender.request(SCHEDULE_LIST, QueueEmpty())

    def schedule_create(self, params: ScheduleCreateParams) -> PendingRequest[ScheduleInfo]:
        """Create a schedule."""
        return self._sender.request(SCHEDULE_CREATE, params)

    def schedule_update(self, params: ScheduleUpdateParams) -> PendingRequest[ScheduleInfo]:
        """Change a schedule."""
        return self._sender.request(SCHEDULE_UPDATE, params)

    def schedule_pause(self, params: ScheduleRef) -> PendingRequest[ScheduleInfo]:
        """Stop firing until resumed."""
        return self._sender.request(SCHEDULE_PAUSE, params)

    def schedule_resume(self, params: ScheduleRef) -> PendingRequest[ScheduleInfo]:
        """Fire again from now on."""
        return self._sender.request(SCHEDULE_RESUME, params)

    def schedule_delete(self, params: ScheduleRef) -> PendingRequest[QueueEmpty]:
        """Delete a schedule (history too)."""
        return self._sender.request(SCHEDULE_DELETE, params)

    def schedule_run_now(self, params: ScheduleRef) -> PendingRequest[ScheduleRunResult]:
        """Run its prompt now."""
        return self._sender.request(SCHEDULE_RUN_NOW, params)

    def schedule_history(self, params: ScheduleRef) -> PendingRequest[ScheduleHistoryResult]:
        """Its fires, skips."""
        return self._sender.request(SCHEDULE_HISTORY, params)

    def automation_get(self) -> PendingRequest[AutomationInfo]:
        """Lanes, heartbeat, queue mode."""
        return self._sender.request(AUTOMATION_GET, QueueEmpty())

    def automation_set(self, params: AutomationSetParams) -> PendingRequest[AutomationInfo]:
        """Change them."""
        return self._sender.request(AUTOMATION_SET, params)

    def heartbeat_history(self) -> PendingRequest[HeartbeatHistoryResult]:
        """Recent beats."""
        return self._sender.request(HEARTBEAT_HISTORY, QueueEmpty())

    def heartbeat_run_now(self) -> PendingRequest[HeartbeatBeat]:
        """Beat now (or say why not)."""
        return self._sender.request(HEARTBEAT_RUN_NOW, QueueEmpty())

    def memory_list(self, params: MemoryListParams) -> PendingRequest[MemoryListResult]:
        """Memories the thread sees (a tier, a search)."""
        return self._sender.request(MEMORY_LIST, params)

    def memory_write(self, params: MemoryWriteParams) -> PendingRequest[MemoryInfo]:
        """The author saves a memory."""
        return self._sender.request(MEMORY_WRITE, params)

    def memory_update(self, params: MemoryUpdateParams) -> PendingRequest[MemoryInfo]:
        """Edit, pin or move a memory to another tier."""
        return self._sender.request(MEMORY_UPDATE, params)

    def memory_forget(self, params: MemoryKeyParams) -> PendingRequest[MemoryInfo]:
        """Forget a memory."""
        return self._sender.request(MEMORY_FORGET, params)

    def memory_events(self, params: MemoryEventsParams) -> PendingRequest[MemoryEventsResult]:
        """The thread's stored memory and context events, each with the message its chip follows."""
        return self._sender.request(MEMORY_EVENTS, params)

    def identity_get(self) -> PendingRequest[IdentityGetResult]:
        """The workspace's identity files."""
        return self._sender.request(IDENTITY_GET, IdentityGetParams())

    def identity_set(self, params: IdentitySetParams) -> PendingRequest[IdentityFileInfo]:
        """Write an identity file."""
        return self._sender.request(IDENTITY_SET, params)

    def agents_providers(self) -> PendingRequest[AgentProvidersResult]:
        """Strong-agent CLIs: found, version, what is missing."""
        return self._sender.request(AGENTS_PROVIDERS, AgentsEmpty())
