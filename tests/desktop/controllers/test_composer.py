"""`ComposerController` over a recording sender: a cached prompt list, and the feature requests."""

from __future__ import annotations

from desktop.controllers.composer import ComposerController, feature_error_text
from sidecar.protocol import (
    ErrorObject,
    FeatureErrorCode,
    PromptGetParams,
    PromptInfo,
    PromptListParams,
    PromptListResult,
    ResourceListParams,
    ResourceRef,
    ServerInfo,
    ServerStatusParams,
)
from tests.desktop.support import FakeSender


def listed(*names: str) -> PromptListResult:
    prompts = tuple(PromptInfo(server="docs", name=name, command=f"/docs:{name}") for name in names)
    return PromptListResult(prompts=prompts)


def status() -> ServerStatusParams:
    server = ServerInfo.model_validate(
        {"name": "docs", "state": "ready", "tool_count": 0, "trust": "untrusted",
         "enabled": True, "builtin": False, "required": False, "transport": "stdio",
         "restarts": 0}
    )  # fmt: skip
    return ServerStatusParams(server=server)


def test_refreshing_caches_the_prompts_and_announces_them(fake_sender: FakeSender):
    controller = ComposerController(fake_sender.api)
    changes: list[None] = []
    controller.prompts_changed.connect(lambda: changes.append(None))
    controller.refresh_prompts()
    params, pending = fake_sender.last("prompt/list")
    assert params == PromptListParams()
    pending.resolve(listed("summarize"))
    assert [p.command for p in controller.prompts] == ["/docs:summarize"]
    assert [c.command for c in controller.choices()][-1] == "/docs:summarize"
    assert changes == [None]


def test_a_refresh_asked_during_one_in_flight_lists_once_more_afterwards(fake_sender: FakeSender):
    controller = ComposerController(fake_sender.api)
    first = controller.refresh_prompts()
    assert controller.refresh_prompts() is first
    controller.handle_status(status())
    assert fake_sender.methods() == ["prompt/list"]
    first.resolve(listed("old"))
    assert fake_sender.methods() == ["prompt/list", "prompt/list"]
    fake_sender.last("prompt/list")[1].resolve(listed("new"))
    assert [p.name for p in controller.prompts] == ["new"]
    assert fake_sender.methods() == ["prompt/list", "prompt/list"]


def test_a_failed_listing_keeps_the_cached_prompts(fake_sender: FakeSender):
    controller = ComposerController(fake_sender.api)
    controller.refresh_prompts().resolve(listed("kept"))
    controller.refresh_prompts().reject(ErrorObject(code=-31002, message="not running"))
    assert [p.name for p in controller.prompts] == ["kept"]
    controller.refresh_prompts()
    assert fake_sender.methods() == ["prompt/list"] * 3


def test_feature_requests_carry_their_typed_params(fake_sender: FakeSender):
    controller = ComposerController(fake_sender.api)
    controller.expand("docs", "summarize", {"path": "a.md"})
    controller.list_resources()
    controller.attach("docs", "file:///a.md")
    assert fake_sender.last("prompt/get")[0] == PromptGetParams(
        server="docs", name="summarize", arguments={"path": "a.md"}
    )
    assert fake_sender.last("resource/list")[0] == ResourceListParams()
    assert fake_sender.last("resource/attach")[0] == ResourceRef(server="docs", uri="file:///a.md")


def test_feature_errors_are_led_by_what_their_code_means():
    refused = ErrorObject(code=FeatureErrorCode.SERVER_REFUSED, message="bad zone")
    unavailable = ErrorObject(code=FeatureErrorCode.SERVER_UNAVAILABLE, message="docs is down")
    other = ErrorObject(code=-32603, message="internal")
    refused_lead = feature_error_text(refused).removesuffix(": bad zone")
    unavailable_lead = feature_error_text(unavailable).removesuffix(": docs is down")
    assert refused_lead and unavailable_lead and refused_lead != unavailable_lead
    assert feature_error_text(other) == "internal"
