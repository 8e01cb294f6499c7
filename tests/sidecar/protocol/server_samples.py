"""Samples of the server/* and grant/* wire models (merged into `samples.METHOD_SAMPLES`)."""

from __future__ import annotations

from sidecar.protocol import (
    ConfigIssueInfo,
    Done,
    GrantInfo,
    GrantListResult,
    GrantRevokeParams,
    LaunchPreviewInfo,
    ProtocolLogEntryInfo,
    SecretSetParams,
    ServerConfigInfo,
    ServerConfigParams,
    ServerImportParams,
    ServerImportResult,
    ServerInfo,
    ServerListResult,
    ServerLogsParams,
    ServerLogsResult,
    ServerPreviewParams,
    ServerRef,
    ServerSetEnabledParams,
    ServerStatusParams,
    ServerTestResult,
    WireModel,
)

CONFIG = ServerConfigInfo(
    name="github",
    command="npx",
    args=("-y", "@modelcontextprotocol/server-github"),
    env={"GITHUB_TOKEN": "${secret:GITHUB_TOKEN}"},
    cwd="/tmp",
    enabled=False,
    trust="trusted",
    timeout=60.5,
    idle_timeout=None,
    allowed_tools=("search",),
    denied_tools=("delete_repo",),
    required=True,
)
INFO = ServerInfo(
    name="github",
    state="backoff",
    error="the server exited with code 1",
    tool_count=3,
    trust="trusted",
    enabled=True,
    builtin=False,
    required=True,
    transport="stdio",
    restarts=2,
    retry_in_s=1.5,
    pid=4242,
    config=CONFIG,
)
ISSUE = ConfigIssueInfo(message="Field required", server="github", field="command")

SERVER_SAMPLES: dict[type[WireModel], WireModel] = {
    Done: Done(),
    ServerListResult: ServerListResult(
        servers=(INFO,), config_issues=(ISSUE,), config_path="/data/mcp.json"
    ),
    ServerConfigParams: ServerConfigParams(config=CONFIG),
    ServerInfo: INFO,
    ServerRef: ServerRef(name="github"),
    ServerSetEnabledParams: ServerSetEnabledParams(name="github", enabled=False),
    ServerLogsParams: ServerLogsParams(name="github", limit=20),
    ServerLogsResult: ServerLogsResult(
        stderr=("--- launch 1 ---", "listening"),
        protocol=(ProtocolLogEntryInfo(at=1.5, direction="out", text="request 1 tools/list"),),
    ),
    ServerPreviewParams: ServerPreviewParams(config=CONFIG, name="github"),
    LaunchPreviewInfo: LaunchPreviewInfo(
        transport="stdio",
        command="npx",
        resolved_command="/usr/local/bin/npx",
        args=("-y",),
        cwd="/tmp",
        path=("/usr/local/bin", "/usr/bin"),
        env_keys=("GITHUB_TOKEN", "HOME", "PATH"),
        url=None,
        header_keys=("Authorization",),
        placeholders=("secret:GITHUB_TOKEN (set)",),
        problems=("cwd missing",),
    ),
    ServerTestResult: ServerTestResult(
        ok=False, state="crashed", error="boom", tools=("a",), stderr=("x",), elapsed_s=0.25
    ),
    ServerImportParams: ServerImportParams(path="~/claude_desktop_config.json"),
    ServerImportResult: ServerImportResult(added=("time",), skipped=(ISSUE,)),
    SecretSetParams: SecretSetParams(name="GITHUB_TOKEN", value="ghp_x"),
    GrantListResult: GrantListResult(
        grants=(
            GrantInfo(
                thread_id="t-1", thread_title="Notes", server="time", tool="now", created_at=2.5
            ),
        )
    ),
    GrantRevokeParams: GrantRevokeParams(thread_id="t-1", server="time", tool="now"),
}

SERVER_NOTIFICATION_SAMPLES: list[WireModel] = [ServerStatusParams(server=INFO, removed=True)]
