"""`ServersState`, `GrantsState`, the config text helpers and `ServersController`, without Qt."""

from __future__ import annotations

import pytest

from desktop.controllers.servers import ServersController
from desktop.models.servers import (
    GrantsState,
    ServersState,
    describe_server,
    format_import_result,
    format_key_values,
    format_preview,
    grant_notice,
    light_for,
    parse_key_values,
    parse_lines,
)
from sidecar.protocol import (
    ApprovalInterrupt,
    ApprovalValue,
    ConfigIssueInfo,
    Done,
    ErrorObject,
    GrantInfo,
    GrantListResult,
    GrantRevokeParams,
    LaunchPreviewInfo,
    SecretSetParams,
    ServerImportResult,
    ServerInfo,
    ServerListResult,
    ServerRef,
    ServerStatusParams,
)
from tests.desktop.support import FakeSender


def server(name: str = "time", state: str = "ready", **fields: object) -> ServerInfo:
    base: dict[str, object] = {
        "name": name, "state": state, "tool_count": 1, "trust": "untrusted", "enabled": True,
        "builtin": False, "required": False, "transport": "stdio", "restarts": 0,
    }  # fmt: skip
    return ServerInfo.model_validate(base | fields)


def grant(thread_id: str = "t1", tool: str = "get_time") -> GrantInfo:
    return GrantInfo(
        thread_id=thread_id, thread_title="T", server="time", tool=tool, created_at=1.0
    )


def listing(*servers: ServerInfo) -> ServerListResult:
    return ServerListResult(servers=servers, config_path="/tmp/mcp.json")


@pytest.mark.parametrize(
    ("state", "light"),
    [
        ("ready", "green"), ("starting", "amber"), ("backoff", "amber"), ("degraded", "amber"),
        ("crashed", "red"), ("disabled", "grey"), ("stopped", "grey"),
    ],
)  # fmt: skip
def test_each_state_maps_to_its_light(state: str, light: str):
    assert light_for(state) == light  # type: ignore[arg-type]


def test_a_status_notification_updates_the_row_in_place():
    state = ServersState()
    state.set_list(listing(server("a"), server("b")))
    rows: list[int] = []
    state.updated.connect(rows.append)
    state.apply_status(ServerStatusParams(server=server("b", "crashed", error="boom")))
    assert rows == [1]
    found = state.get("b")
    assert found is not None and found.state == "crashed" and found.error == "boom"


def test_a_status_for_an_unknown_server_appends_it_and_removed_drops_it():
    state = ServersState()
    resets: list[None] = []
    state.reset.connect(lambda: resets.append(None))
    state.apply_status(ServerStatusParams(server=server("new", "starting")))
    assert [s.name for s in state.servers] == ["new"]
    state.apply_status(ServerStatusParams(server=server("new"), removed=True))
    assert state.servers == ()
    assert len(resets) == 2


def test_an_unchanged_status_emits_nothing():
    state = ServersState()
    state.set_list(listing(server("a")))
    rows: list[int] = []
    state.updated.connect(rows.append)
    state.upsert(server("a"))
    assert rows == []


def test_backoff_description_says_when_the_next_attempt_is():
    assert describe_server(server(state="backoff", retry_in_s=4.2, restarts=2)) == (
        "backoff (retry in 4s), 2 restarts"
    )


def test_key_value_lines_round_trip_and_bad_lines_raise():
    values = parse_key_values("A=1\n\n# note\nTOKEN = ${secret:GH} \nEMPTY=")
    assert values == {"A": "1", "TOKEN": "${secret:GH}", "EMPTY": ""}
    assert parse_key_values(format_key_values(values)) == values
    with pytest.raises(ValueError, match="line 2"):
        parse_key_values("A=1\nnonsense")
    assert parse_lines(" a \n\n b") == ("a", "b")


def test_preview_text_lists_path_and_env_keys_without_values():
    preview = LaunchPreviewInfo(
        transport="stdio", command="uvx", resolved_command="/usr/bin/uvx", args=("x",),
        cwd=None, path=("/usr/bin", "/bin"), env_keys=("TOKEN",), url=None, header_keys=(),
        placeholders=("secret:TOKEN (set)",), problems=(),
    )  # fmt: skip
    lines = format_preview(preview).splitlines()
    assert "Resolves to: /usr/bin/uvx" in lines
    assert "Environment keys: TOKEN" in lines
    assert lines[-2:] == ["  /usr/bin", "  /bin"]


def test_import_text_names_skipped_servers_and_fields():
    result = ServerImportResult(
        added=("time",), skipped=(ConfigIssueInfo(message="bad", server="git", field="args"),)
    )
    assert format_import_result(result).splitlines() == [
        "Added: time", "Skipped:", "  git.args: bad",
    ]  # fmt: skip


def test_controller_restart_sends_the_name_and_applies_the_reply(fake_sender: FakeSender):
    state = ServersState()
    controller = ServersController(fake_sender.api, state)
    state.set_list(listing(server("time", "crashed")))
    controller.restart("time")
    params, pending = fake_sender.last("server/restart")
    assert params == ServerRef(name="time")
    pending.resolve(server("time", "starting", restarts=1))
    found = state.get("time")
    assert found is not None and found.state == "starting"


def test_controller_reports_failures(fake_sender: FakeSender):
    controller = ServersController(fake_sender.api, ServersState())
    errors: list[str] = []
    controller.error_reported.connect(errors.append)
    controller.remove("nope")
    _, pending = fake_sender.last("server/remove")
    pending.reject(ErrorObject(code=-32020, message="no server nope"))
    assert errors == ["Removing nope failed: no server nope"]


def test_controller_revoke_removes_the_grant_once_confirmed(fake_sender: FakeSender):
    grants = GrantsState()
    controller = ServersController(fake_sender.api, ServersState(), grants)
    controller.refresh_grants()
    fake_sender.last("grant/list")[1].resolve(GrantListResult(grants=(grant("t1"), grant("t2"))))
    controller.revoke_grant(grants.grants[0])
    params, pending = fake_sender.last("grant/revoke")
    assert params == GrantRevokeParams(thread_id="t1", server="time", tool="get_time")
    assert len(grants) == 2
    pending.resolve(Done())
    assert [g.thread_id for g in grants.grants] == ["t2"]


def test_an_empty_secret_value_removes_the_secret(fake_sender: FakeSender):
    controller = ServersController(fake_sender.api, ServersState())
    controller.set_secret("GH_TOKEN", "")
    params, _ = fake_sender.last("server/set_secret")
    assert params == SecretSetParams(name="GH_TOKEN", value=None)


def test_only_answers_that_leave_a_grant_standing_are_noted_and_always_says_every_thread():
    approval = ApprovalInterrupt(
        id="i1", title="Write", body="", server="workspace", tool="write",
        arguments={}, call_id="c1",
    )  # fmt: skip
    notes = {
        decision: grant_notice(approval, ApprovalValue(decision=decision))
        for decision in ("allow_once", "allow_thread", "allow_always", "deny")
    }
    assert notes["allow_once"] is None and notes["deny"] is None
    assert notes["allow_always"] is not None and "every thread" in notes["allow_always"]
    assert notes["allow_thread"] is not None and "this thread" in notes["allow_thread"]
