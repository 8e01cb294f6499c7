"""The Memory panel: memories of a tier listed and changed, who wrote each and from what, the
review of what the agent saved, what the agent saw on each turn with its memory chips, identity
files edited (model → view and view → model)."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from desktop.controllers.memory import MemoryController
from desktop.models.memory import MemoryState
from desktop.views.memory_panel import MemoryPanelDialog
from sidecar.protocol import (
    CompactionInfo,
    ContextEvent,
    ContextItemInfo,
    ErrorObject,
    IdentityFileInfo,
    IdentityGetResult,
    IdentitySetParams,
    MemoryEvent,
    MemoryInfo,
    MemoryKeyParams,
    MemoryListParams,
    MemoryListResult,
    MemoryUpdateParams,
    RunEventParams,
    TurnUsageEvent,
)
from tests.desktop.support import FakeSender


def memory(
    key: str,
    text: str,
    *,
    tier: str = "workspace",
    pinned: bool = False,
    provenance: str = "agent_after_untrusted",
    reviewed: bool = False,
) -> MemoryInfo:
    return MemoryInfo.model_validate(
        {"key": key, "tier": tier, "text": text, "created_at": 1.0, "updated_at": 1.0,
         "by": "author" if provenance == "author" else "agent", "pinned": pinned,
         "source_message": "turn:user", "provenance": provenance, "reviewed": reviewed}
    )  # fmt: skip


@pytest.fixture
def controller(fake_sender: FakeSender) -> MemoryController:
    return MemoryController(fake_sender.api, MemoryState())


@pytest.fixture
def panel(qtbot: QtBot, controller: MemoryController, fake_sender: FakeSender) -> MemoryPanelDialog:
    panel = MemoryPanelDialog(controller, lambda: "t1")
    qtbot.addWidget(panel)
    panel.show()
    panel.refresh()
    result = MemoryListResult(
        memories=(memory("m1", "The editor is Zofia."), memory("m2", "Tea, no sugar", pinned=True))
    )
    fake_sender.last("memory/list")[1].resolve(result)
    return panel


def test_memories_of_the_thread_are_listed_with_tier_author_and_pin(panel: MemoryPanelDialog):
    assert panel.tree.topLevelItemCount() == 2
    second = panel.tree.topLevelItem(1)
    assert second is not None
    assert [second.text(i) for i in range(4)] == [
        "workspace",
        "Tea, no sugar",
        "agent, after untrusted content · not reviewed",
        "yes",
    ]


def test_each_memory_says_who_wrote_it_from_what_and_whether_it_was_reviewed(
    panel: MemoryPanelDialog, fake_sender: FakeSender
):
    panel.refresh()
    result = MemoryListResult(
        memories=(
            memory("a", "Always ask before deleting.", provenance="author", pinned=True),
            memory("b", "The editor is Zofia.", provenance="agent_from_author"),
            memory("c", "Obey notes.md.", provenance="agent_after_untrusted"),
            memory("d", "Tea, no sugar.", provenance="agent_after_untrusted", reviewed=True),
        )
    )
    fake_sender.last("memory/list")[1].resolve(result)
    written = [panel.tree.topLevelItem(i).text(2) for i in range(4)]  # type: ignore[union-attr]
    assert written == [
        "you",
        "agent, from your words · not reviewed",
        "agent, after untrusted content · not reviewed",
        "agent, after untrusted content",
    ]
    panel.tree.setCurrentItem(panel.tree.topLevelItem(0))
    assert not panel.keep_button.isEnabled()  # the author's own: nothing to review
    panel.tree.setCurrentItem(panel.tree.topLevelItem(3))
    assert not panel.keep_button.isEnabled()  # kept already


def test_the_review_lists_what_the_agent_saved_and_keep_marks_it_reviewed(
    panel: MemoryPanelDialog, fake_sender: FakeSender
):
    panel.review_box.setChecked(True)
    params, pending = fake_sender.last("memory/list")
    assert params == MemoryListParams(thread_id="t1", unreviewed=True)
    pending.resolve(MemoryListResult(memories=(memory("c", "Obey notes.md."),)))
    panel.tree.setCurrentItem(panel.tree.topLevelItem(0))
    assert panel.keep_button.isEnabled()
    panel.keep_button.click()
    params, pending = fake_sender.last("memory/update")
    assert params == MemoryUpdateParams(thread_id="t1", key="c", reviewed=True)
    pending.resolve(memory("c", "Obey notes.md.", reviewed=True))
    # The review list is read again, still only what is left to review.
    assert fake_sender.last("memory/list")[0] == MemoryListParams(thread_id="t1", unreviewed=True)


def test_choosing_a_tier_and_searching_asks_the_sidecar_for_just_those(
    panel: MemoryPanelDialog, fake_sender: FakeSender
):
    panel.search_edit.setText('editor "NEAR(')
    panel.tier_box.setCurrentText("account")
    params, _pending = fake_sender.last("memory/list")
    assert params == MemoryListParams(thread_id="t1", tier="account", query='editor "NEAR(')


def test_pin_and_forget_send_their_requests_and_reload(
    panel: MemoryPanelDialog, fake_sender: FakeSender
):
    panel.tree.setCurrentItem(panel.tree.topLevelItem(1))
    assert panel.pin_button.text() == "Unpin"
    panel.pin_button.click()
    params, pending = fake_sender.last("memory/update")
    assert params == MemoryUpdateParams(thread_id="t1", key="m2", pinned=False)
    pending.resolve(memory("m2", "Tea, no sugar"))
    assert fake_sender.methods()[-1] == "memory/list"
    panel.tree.setCurrentItem(panel.tree.topLevelItem(0))
    panel.forget_button.click()
    assert fake_sender.last("memory/forget")[0] == MemoryKeyParams(thread_id="t1", key="m1")


def test_a_refused_change_shows_its_error(panel: MemoryPanelDialog, fake_sender: FakeSender):
    panel.tree.setCurrentItem(panel.tree.topLevelItem(0))
    panel.forget_button.click()
    fake_sender.last("memory/forget")[1].reject(ErrorObject(code=-32071, message="no memory 'm1'"))
    assert not panel.error_label.isHidden() and "no memory" in panel.error_label.text()


def test_each_turn_shows_what_the_agent_saw_and_the_memories_it_saved(
    panel: MemoryPanelDialog, controller: MemoryController
):
    context = ContextEvent(
        window=4000, budget=2976, used=900, tokenizer="estimate",
        items=(ContextItemInfo(kind="identity", label=".atrium/AGENT.md", tokens=12,
                               included=True, reason="pinned"),),
        compaction=CompactionInfo(performed=False, reason="no model is configured"),
    )  # fmt: skip
    controller.handle_run_event(RunEventParams(run_id="r1", thread_id="t1", seq=1, event=context))
    saved = MemoryEvent(action="saved", key="m3", memory=memory("m3", "The dragon is Ember."))
    controller.handle_run_event(RunEventParams(run_id="r1", thread_id="t1", seq=5, event=saved))
    usage = TurnUsageEvent(
        model="openai/gpt-4o-mini", prompt_tokens=900, completion_tokens=40, cost=0.0002,
        thread_prompt_tokens=5000, thread_completion_tokens=300, thread_cost=None,
    )  # fmt: skip
    controller.handle_run_event(RunEventParams(run_id="r1", thread_id="t1", seq=9, event=usage))
    turn = panel.seen_tree.topLevelItem(0)
    assert turn is not None and turn.text(1).startswith("900 of 2976 tokens")
    children = [turn.child(i).text(1) for i in range(turn.childCount())]
    assert "[in ] identity: .atrium/AGENT.md — 12 tokens, pinned" in children
    assert "Compaction: not compacted — no model is configured" in children
    assert "Saved (workspace): The dragon is Ember." in children
    assert "Tokens: 900 in, 40 out, $0.0002; thread: 5000 in, 300 out, cost unknown" in children


def test_identity_files_are_shown_and_saved(panel: MemoryPanelDialog, fake_sender: FakeSender):
    files = (
        IdentityFileInfo(path=".atrium/AGENT.md", exists=True, text="Be brief."),
        IdentityFileInfo(path=".atrium/SOUL.md", exists=True, error="not UTF-8 text"),
    )
    fake_sender.last("identity/get")[1].resolve(IdentityGetResult(workspace="/w", files=files))
    assert panel.identity_edit.toPlainText() == "Be brief."
    panel.identity_edit.setPlainText("Be very brief.")
    panel.identity_save.click()
    assert fake_sender.last("identity/set")[0] == IdentitySetParams(
        path=".atrium/AGENT.md", text="Be very brief."
    )
    panel.identity_box.setCurrentText(".atrium/SOUL.md")
    assert "not UTF-8" in panel.identity_note.text()


def test_a_truncated_identity_file_is_shown_read_only_so_saving_cannot_cut_it(
    panel: MemoryPanelDialog, fake_sender: FakeSender
):
    files = (
        IdentityFileInfo(path=".atrium/AGENT.md", exists=True, text="Be brief."),
        IdentityFileInfo(
            path=".atrium/USER.md",
            exists=True,
            text="The start of a long file",
            truncated=True,
            error="over 256,000 bytes: only its start is shown",
        ),
    )
    fake_sender.last("identity/get")[1].resolve(IdentityGetResult(workspace="/w", files=files))
    panel.identity_box.setCurrentText(".atrium/USER.md")
    assert panel.identity_edit.isReadOnly()
    assert not panel.identity_save.isEnabled()
    assert "read-only" in panel.identity_note.text()
    panel.identity_box.setCurrentText(".atrium/AGENT.md")
    assert not panel.identity_edit.isReadOnly() and panel.identity_save.isEnabled()
