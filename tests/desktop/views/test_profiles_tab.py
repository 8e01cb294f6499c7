"""The settings dialog's Profiles tab: `profile/list` → list and form, edits → `profile/set`."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from desktop.controllers.plans import CoordController
from desktop.views.profiles_tab import ProfilesTabWidget, split_list
from desktop.views.settings_dialog import SettingsDialog
from sidecar.protocol import (
    CoordErrorCode,
    ErrorObject,
    ProfileInfo,
    ProfileListResult,
    ProfileSetParams,
    SettingsInfo,
)
from tests.desktop.support import FakeSender

LEFT = Qt.MouseButton.LeftButton
PROFILES = (
    ProfileInfo(id="writer", name="Writer"),
    ProfileInfo(id="coder", name="Coder", kind="claude_code", tools_denied=("sandbox__*",),
                budget_tokens=50_000),
)  # fmt: skip


def listing(error: str | None = None) -> ProfileListResult:
    return ProfileListResult(profiles=PROFILES, path="/data/profiles.json", error=error)


@pytest.fixture
def tab(qtbot: QtBot, fake_sender: FakeSender) -> ProfilesTabWidget:
    tab = ProfilesTabWidget(CoordController(fake_sender.api))
    qtbot.addWidget(tab)
    tab.show()
    tab.refresh()
    fake_sender.last("profile/list")[1].resolve(listing())
    return tab


def save(qtbot: QtBot, tab: ProfilesTabWidget, fake_sender: FakeSender) -> ProfileSetParams:
    qtbot.mouseClick(tab.save_button, LEFT)
    params, _ = fake_sender.last("profile/set")
    assert isinstance(params, ProfileSetParams)
    return params


def test_the_list_and_the_form_show_the_profiles(tab: ProfilesTabWidget):
    assert tab.list.count() == 2 and tab.list.item(1).text() == "Coder (coder) · claude_code"
    assert tab.id_edit.text() == "writer" and tab.concurrency_spin.value() == 4
    tab.list.setCurrentRow(1)
    assert tab.kind_combo.currentText() == "claude_code"
    assert tab.denied_edit.text() == "sandbox__*"
    assert tab.budget_tokens_spin.value() == 50_000
    assert tab.budget_cost_spin.text() == "none"
    assert not tab.file_error_label.isVisible()


def test_saving_unchanged_profiles_round_trips_them(
    qtbot: QtBot, tab: ProfilesTabWidget, fake_sender: FakeSender
):
    assert save(qtbot, tab, fake_sender) == ProfileSetParams(profiles=PROFILES)


def test_an_edited_profile_is_sent_with_every_field(
    qtbot: QtBot, tab: ProfilesTabWidget, fake_sender: FakeSender
):
    tab.list.setCurrentRow(1)
    qtbot.keyClicks(tab.allowed_edit, "workspace__*, memory__search")
    tab.may_spawn_check.setChecked(True)
    tab.max_depth_spin.setValue(3)
    tab.stall_spin.setValue(90)
    tab.budget_cost_spin.setValue(2.5)
    tab.workdir_combo.setCurrentText("worktree")
    tab.model_edit.setText("")
    params = save(qtbot, tab, fake_sender)
    coder = params.profiles[1]
    assert coder.tools_allowed == ("workspace__*", "memory__search")
    assert (coder.may_spawn, coder.max_depth, coder.stall_seconds) == (True, 3, 90.0)
    assert (coder.budget_cost, coder.budget_tokens, coder.workdir) == (2.5, 50_000, "worktree")
    assert params.profiles[0] == PROFILES[0]
    assert tab.list.item(1).text() == "Coder (coder) · claude_code"


def test_a_profile_is_added_and_another_removed(
    qtbot: QtBot, tab: ProfilesTabWidget, fake_sender: FakeSender
):
    qtbot.mouseClick(tab.add_button, LEFT)
    assert tab.list.count() == 3 and tab.id_edit.text() == "profile-1"
    tab.id_edit.clear()
    qtbot.keyClicks(tab.id_edit, "reviewer")
    tab.list.setCurrentRow(0)
    qtbot.mouseClick(tab.remove_button, LEFT)
    params = save(qtbot, tab, fake_sender)
    assert [p.id for p in params.profiles] == ["coder", "reviewer"]


def test_a_refusal_is_shown_in_place_and_a_good_reply_reloads(
    qtbot: QtBot, tab: ProfilesTabWidget, fake_sender: FakeSender
):
    save(qtbot, tab, fake_sender)
    error = ErrorObject(code=CoordErrorCode.PROFILES_INVALID, message="coder: unknown model")
    fake_sender.last("profile/set")[1].reject(error)
    assert tab.error_label.isVisible() and "unknown model" in tab.error_label.text()
    save(qtbot, tab, fake_sender)
    fake_sender.last("profile/set")[1].resolve(listing())
    assert not tab.error_label.isVisible()


def test_bad_fields_and_duplicate_ids_are_caught_before_sending(
    qtbot: QtBot, tab: ProfilesTabWidget, fake_sender: FakeSender
):
    tab.id_edit.clear()
    qtbot.keyClicks(tab.id_edit, "bad id")
    qtbot.mouseClick(tab.save_button, LEFT)
    assert "profile/set" not in fake_sender.methods()
    assert "Profile bad id: id" in tab.error_label.text()
    tab.id_edit.clear()
    qtbot.keyClicks(tab.id_edit, "coder")
    qtbot.mouseClick(tab.save_button, LEFT)
    assert "unique: coder" in tab.error_label.text()
    assert "profile/set" not in fake_sender.methods()


def test_a_broken_profiles_file_is_explained(qtbot: QtBot, fake_sender: FakeSender):
    tab = ProfilesTabWidget(CoordController(fake_sender.api))
    qtbot.addWidget(tab)
    tab.show()
    tab.load(listing(error="line 3: expected a list"))
    assert tab.file_error_label.isVisible()
    assert "line 3: expected a list" in tab.file_error_label.text()
    assert tab.path_label.text() == "/data/profiles.json"


def test_the_settings_dialog_has_a_profiles_tab_with_a_coordinator(
    qtbot: QtBot, fake_sender: FakeSender
):
    info = SettingsInfo(
        model=None, api_base=None, workspace="/w", has_api_key=False, model_source="none"
    )
    dialog = SettingsDialog(info, coord=CoordController(fake_sender.api))
    qtbot.addWidget(dialog)
    assert dialog.profiles_tab is not None and dialog.tabs.count() == 2
    assert fake_sender.methods() == ["profile/list", "agents/providers"]
    plain = SettingsDialog(info)
    qtbot.addWidget(plain)
    assert plain.profiles_tab is None and plain.tabs.count() == 1
    assert split_list(" a, ,b ") == ("a", "b")
