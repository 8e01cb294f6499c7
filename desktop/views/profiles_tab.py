"""`ProfilesTabWidget`: the subagent profiles (the settings dialog's Profiles tab).

Lists the profiles from `profile/list` (and why the profiles file could not be used, if so),
shows which strong-agent CLIs the kinds `claude_code`, `codex` and `openclaw` would drive were
found (`agents/providers`: version, or what is missing and how to install it),
edits one at a time in a small form, adds and removes them, and saves them all with
`profile/set`. Each profile is checked against `ProfileInfo` before sending; the sidecar's
`PROFILES_INVALID` refusal is shown in place.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, get_args

import shiboken6
from pydantic import ValidationError
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from desktop.controllers.plans import CoordController
from desktop.views.text import WARNING_COLOUR, build_status_label
from sidecar.protocol import (
    AgentProvidersResult,
    ErrorObject,
    ProfileInfo,
    ProfileKind,
    ProfileListResult,
    WorkdirPolicy,
)

_T = TypeVar("_T")

NAMES = {"claude": "Claude Code", "codex": "Codex", "openclaw": "OpenClaw"}


def describe_agents(result: AgentProvidersResult) -> str:
    """One line per strong-agent CLI: its version, or why it cannot run and how to fix that."""
    if result.error:
        return f"Strong-agent CLIs could not be checked: {result.error}"
    lines: list[str] = []
    for info in result.providers:
        name = NAMES.get(info.provider, info.provider)
        if info.installed and not info.error:
            lines.append(f"{name} {info.version or '(version unknown)'}: {info.executable}")
            continue
        problem = info.error or "not found"
        lines.append(f"{name}: {problem}" + (f". {info.hint}" if info.hint else ""))
    return "\n".join(lines)


NONE_TEXT = "none"


def split_list(text: str) -> tuple[str, ...]:
    """A comma list → its non-blank items."""
    return tuple(part.strip() for part in text.split(",") if part.strip())


def _spin(low: int, high: int, none: bool = False) -> QSpinBox:
    spin = QSpinBox()
    spin.setRange(0 if none else low, high)
    if none:
        spin.setSpecialValueText(NONE_TEXT)
    return spin


def _seconds(none: bool = False) -> QDoubleSpinBox:
    spin = QDoubleSpinBox()
    spin.setRange(0.0 if none else 1.0, 1_000_000.0)
    spin.setDecimals(2 if none else 0)
    if none:
        spin.setSpecialValueText(NONE_TEXT)
    return spin


def _combo(values: tuple[str, ...]) -> QComboBox:
    combo = QComboBox()
    combo.addItems(list(values))
    return combo


class ProfilesTabWidget(QWidget):
    """Edits the profile list; Save sends `profile/set` through `controller` (if given) and
    emits `profiles_submitted(tuple[ProfileInfo, ...])`. Tests reach the form widgets, `list`,
    `add_button`, `remove_button`, `save_button`, `error_label` and `file_error_label`."""

    profiles_submitted = Signal(object)

    def __init__(
        self, controller: CoordController | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.controller = controller
        self._drafts: list[dict[str, Any]] = []
        self._loading = False
        self._build()

    def _build(self) -> None:
        self.list = QListWidget()
        self.list.currentRowChanged.connect(self._on_row_changed)
        self.add_button = QPushButton("Add")
        self.remove_button = QPushButton("Remove")
        self.save_button = QPushButton("Save profiles")
        self.add_button.clicked.connect(self._on_add_clicked)
        self.remove_button.clicked.connect(self._on_remove_clicked)
        self.save_button.clicked.connect(self.save)
        self.path_label = QLabel()
        self.agents_label = QLabel()
        self.agents_label.setWordWrap(True)
        self.agents_label.setTextFormat(Qt.TextFormat.PlainText)
        self.agents_label.hide()
        self.file_error_label = build_status_label(WARNING_COLOUR)
        self.error_label = build_status_label()
        left = QVBoxLayout()
        left.addWidget(self.list, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        left.addLayout(buttons)
        self.form_box = QWidget()
        self.form_box.setLayout(self._build_form())
        body = QHBoxLayout()
        body.addLayout(left, 1)
        body.addWidget(self.form_box, 2)
        layout = QVBoxLayout(self)
        layout.addWidget(self.agents_label)
        layout.addWidget(self.file_error_label)
        layout.addLayout(body, 1)
        layout.addWidget(self.error_label)
        footer = QHBoxLayout()
        footer.addWidget(self.path_label, 1)
        footer.addWidget(self.save_button)
        layout.addLayout(footer)

    def _build_form(self) -> QFormLayout:
        self.id_edit, self.name_edit, self.model_edit = QLineEdit(), QLineEdit(), QLineEdit()
        self.model_edit.setPlaceholderText("The thread's model")
        self.kind_combo = _combo(get_args(ProfileKind))
        self.allowed_edit, self.denied_edit = QLineEdit(), QLineEdit()
        self.allowed_edit.setPlaceholderText("Every tool, e.g. workspace__*, memory__search")
        self.denied_edit.setPlaceholderText("None, e.g. sandbox__*")
        self.may_spawn_check = QCheckBox("May delegate work of its own")
        self.max_depth_spin, self.concurrency_spin = _spin(1, 5), _spin(1, 64)
        self.timeout_spin, self.stall_spin = _seconds(), _seconds()
        self.max_attempts_spin = _spin(1, 10)
        self.budget_tokens_spin = _spin(1, 2_000_000_000, none=True)
        self.budget_cost_spin = _seconds(none=True)
        self.workdir_combo = _combo(get_args(WorkdirPolicy))
        form = QFormLayout()
        rows: tuple[tuple[str, QWidget], ...] = (
            ("Id", self.id_edit), ("Name", self.name_edit), ("Kind", self.kind_combo),
            ("Model", self.model_edit), ("Tools allowed", self.allowed_edit),
            ("Tools denied", self.denied_edit), ("", self.may_spawn_check),
            ("Max depth", self.max_depth_spin), ("Concurrency", self.concurrency_spin),
            ("Timeout (s)", self.timeout_spin), ("Stalled after (s)", self.stall_spin),
            ("Max attempts", self.max_attempts_spin), ("Budget tokens", self.budget_tokens_spin),
            ("Budget cost ($)", self.budget_cost_spin), ("Working folder", self.workdir_combo),
        )  # fmt: skip
        for label, widget in rows:
            form.addRow(label, widget)
        for edit in (self.id_edit, self.name_edit, self.model_edit, self.allowed_edit,
                     self.denied_edit):  # fmt: skip
            edit.textEdited.connect(self._on_form_edited)
        for combo in (self.kind_combo, self.workdir_combo):
            combo.currentTextChanged.connect(self._on_form_edited)
        self.may_spawn_check.toggled.connect(self._on_form_edited)
        for spin in (self.max_depth_spin, self.concurrency_spin, self.timeout_spin,
                     self.stall_spin, self.max_attempts_spin, self.budget_tokens_spin,
                     self.budget_cost_spin):  # fmt: skip
            spin.valueChanged.connect(self._on_form_edited)
        return form

    def refresh(self) -> None:
        """`profile/list` through the controller, then show it (an answer that comes after
        the dialog closed finds nothing to show, and is dropped)."""
        if self.controller is not None:
            alive = self._while_alive
            self.controller.list_profiles().then(alive(self.load), alive(self.show_error))
            self.controller.list_agent_providers().then(
                alive(self.show_agents), alive(self._agents_failed)
            )

    def _while_alive(self, callback: Callable[[_T], None]) -> Callable[[_T], None]:
        def call(value: _T) -> None:
            if shiboken6.isValid(self):
                callback(value)

        return call

    def show_agents(self, result: AgentProvidersResult) -> None:
        """Show which strong-agent CLIs were found (the agents panel's line per CLI)."""
        self.agents_label.setText(describe_agents(result))
        self.agents_label.show()

    def _agents_failed(self, error: ErrorObject | str) -> None:
        message = error if isinstance(error, str) else error.message
        self.show_agents(AgentProvidersResult(error=message))

    def load(self, result: ProfileListResult) -> None:
        """Show the profiles (drops unsaved edits)."""
        self._drafts = [profile.model_dump(mode="python") for profile in result.profiles]
        self.path_label.setText(result.path)
        self.file_error_label.setText(
            f"The profiles file could not be used, so the defaults apply: {result.error}"
        )
        self.file_error_label.setVisible(bool(result.error))
        self.error_label.hide()
        self._fill_list(0)

    def show_error(self, error: ErrorObject | str) -> None:
        self.error_label.setText(error if isinstance(error, str) else error.message)
        self.error_label.show()

    def profiles(self) -> tuple[ProfileInfo, ...]:
        """The edited profiles as `ProfileInfo`s.

        Raises:
            ValueError: a profile does not validate, or two share an id.
        """
        profiles: list[ProfileInfo] = []
        for draft in self._drafts:
            try:
                profiles.append(ProfileInfo.model_validate(draft))
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(part) for part in first["loc"])
                raise ValueError(
                    f"Profile {draft.get('id') or '?'}: {where}: {first['msg']}"
                ) from exc
        ids = [profile.id for profile in profiles]
        if duplicates := sorted({i for i in ids if ids.count(i) > 1}):
            raise ValueError("Profile ids must be unique: " + ", ".join(duplicates))
        if not profiles:
            raise ValueError("Keep at least one profile.")
        return tuple(profiles)

    def save(self) -> None:
        try:
            profiles = self.profiles()
        except ValueError as exc:
            self.show_error(str(exc))
            return
        self.error_label.hide()
        self.profiles_submitted.emit(profiles)
        if self.controller is not None:
            self.controller.save_profiles(profiles).then(self.load, self.show_error)

    def _fill_list(self, row: int) -> None:
        self._loading = True
        self.list.clear()
        self.list.addItems([self._describe(draft) for draft in self._drafts])
        self._loading = False
        self.list.setCurrentRow(min(row, len(self._drafts) - 1))
        self._on_row_changed(self.list.currentRow())

    @staticmethod
    def _describe(draft: dict[str, Any]) -> str:
        return f"{draft.get('name') or '?'} ({draft.get('id') or '?'}) · {draft.get('kind')}"

    def _on_row_changed(self, row: int) -> None:
        has_row = 0 <= row < len(self._drafts)
        self.form_box.setEnabled(has_row)
        self.remove_button.setEnabled(has_row)
        if has_row and not self._loading:
            self._show_draft(self._drafts[row])

    def _show_draft(self, draft: dict[str, Any]) -> None:
        self._loading = True
        self.id_edit.setText(draft["id"])
        self.name_edit.setText(draft["name"])
        self.kind_combo.setCurrentText(draft["kind"])
        self.model_edit.setText(draft["model"] or "")
        self.allowed_edit.setText(", ".join(draft["tools_allowed"]))
        self.denied_edit.setText(", ".join(draft["tools_denied"]))
        self.may_spawn_check.setChecked(draft["may_spawn"])
        self.max_depth_spin.setValue(draft["max_depth"])
        self.concurrency_spin.setValue(draft["concurrency"])
        self.timeout_spin.setValue(draft["timeout"])
        self.stall_spin.setValue(draft["stall_seconds"])
        self.max_attempts_spin.setValue(draft["max_attempts"])
        self.budget_tokens_spin.setValue(draft["budget_tokens"] or 0)
        self.budget_cost_spin.setValue(draft["budget_cost"] or 0.0)
        self.workdir_combo.setCurrentText(draft["workdir"])
        self._loading = False

    def _read_form(self) -> dict[str, Any]:
        return {
            "id": self.id_edit.text().strip(), "name": self.name_edit.text().strip(),
            "kind": self.kind_combo.currentText(), "model": self.model_edit.text().strip() or None,
            "tools_allowed": split_list(self.allowed_edit.text()),
            "tools_denied": split_list(self.denied_edit.text()),
            "may_spawn": self.may_spawn_check.isChecked(),
            "max_depth": self.max_depth_spin.value(), "concurrency": self.concurrency_spin.value(),
            "timeout": self.timeout_spin.value(), "stall_seconds": self.stall_spin.value(),
            "max_attempts": self.max_attempts_spin.value(),
            "budget_tokens": self.budget_tokens_spin.value() or None,
            "budget_cost": self.budget_cost_spin.value() or None,
            "workdir": self.workdir_combo.currentText(),
        }  # fmt: skip

    def _on_form_edited(self, *_args: object) -> None:
        row = self.list.currentRow()
        if self._loading or not 0 <= row < len(self._drafts):
            return
        self._drafts[row] = self._read_form()
        item = self.list.item(row)
        if item is not None:
            item.setText(self._describe(self._drafts[row]))

    def _on_add_clicked(self) -> None:
        taken = {draft.get("id") for draft in self._drafts}
        number = next(n for n in range(1, len(taken) + 2) if f"profile-{n}" not in taken)
        profile = ProfileInfo(id=f"profile-{number}", name=f"New profile {number}")
        self._drafts.append(profile.model_dump(mode="python"))
        self._fill_list(len(self._drafts) - 1)

    def _on_remove_clicked(self) -> None:
        row = self.list.currentRow()
        if 0 <= row < len(self._drafts):
            del self._drafts[row]
            self._fill_list(row)
