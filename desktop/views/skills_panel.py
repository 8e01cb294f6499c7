"""`SkillsPanelWidget`: every skill folder the agent's skills server sees, and the workspace's
routines, in a dock opened from View → Skills.

A skill with bad frontmatter, a duplicate name, an oversized body, a file that is not UTF-8, a
link outside its folder (or folders past the per-folder limit) is listed with an error icon and
its problem in red, never left out; so is a routine file that cannot be read. A filter box narrows
both lists; Reload asks again. Selecting a skill shows its description, folder and problems, then
its body; selecting a routine shows its goal and parameters, and "Run…" asks for its values and
sends `/routine <name> key=value ...` on the selected thread through the window's send path.
"Save plan as routine…" in the run tree's context menu asks for a name and parameters here.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QIcon
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QStyle,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.controllers.skills import SkillsController, routine_command
from desktop.views.routine_dialogs import RoutineRunDialog, SaveRoutineDialog
from desktop.views.text import ERROR_COLOUR, WARNING_COLOUR, build_status_label
from sidecar.protocol import (
    ErrorObject,
    PlanInfo,
    RoutineInfo,
    RoutineProblem,
    SkillInfo,
    SkillReadResult,
)

COLUMNS = ("Name", "Where", "Problem")
WHERE, PROBLEM = 1, 2
ENTRY_ROLE = Qt.ItemDataRole.UserRole
SOURCE_LABELS = {
    "workspace:.agents": "workspace .agents/skills",
    "workspace:.claude": "workspace .claude/skills",
    "account": "account",
}
CHANGED = "changed since approved: the next run asks for approval"

Entry = tuple[str, int]
"""("skill" | "routine" | "routine_problem", its index in the controller's tuple)."""


def skill_problem_text(skill: SkillInfo) -> str:
    """The skill's problems in one line (with the folder that wins a duplicate name)."""
    parts = [p.message for p in skill.problems]
    if skill.shadowed_by:
        parts.append(f"shadowed by {skill.shadowed_by}")
    return "; ".join(parts)


def _skill_detail(skill: SkillInfo) -> str:
    lines = [skill.name, skill.description or "(no description)", "", f"Folder: {skill.path}"]
    lines += [f"Problem ({p.kind}): {p.message}" for p in skill.problems]
    if skill.shadowed_by:
        lines.append(f"Shadowed by: {skill.shadowed_by}")
    if skill.resources:
        lines.append("Files: " + ", ".join(skill.resources))
    return "\n".join(lines)


def _routine_detail(routine: RoutineInfo) -> str:
    lines = [routine.name, f"Goal: {routine.goal}", f"Tasks: {routine.tasks}"]
    lines += [
        f"Parameter {name} (saved value: {value})" for name, value in routine.parameters.items()
    ]
    if routine.needs_approval:
        lines.append(CHANGED.capitalize())
    lines.append(f"File: {routine.path}")
    return "\n".join(lines)


class SkillsPanelWidget(QWidget):
    """Follows `SkillsController`. Tests reach `tree`, `filter_edit`, `reload_button`,
    `run_button`, `detail_view`, `error_label`, `skills_item`, `routines_item`, `run_dialog` and
    `save_dialog`.

    Signals: `run_requested(str)`, the `/routine` command the author asked to send."""

    run_requested = Signal(str)

    def __init__(self, controller: SkillsController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.run_dialog: RoutineRunDialog | None = None
        self.save_dialog: SaveRoutineDialog | None = None
        self._build()
        controller.changed.connect(self._show)
        controller.failed.connect(self._show_error)
        self._show()

    def _build(self) -> None:
        self.filter_edit = QLineEdit()
        self.filter_edit.setPlaceholderText("Filter skills and routines")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.textChanged.connect(self._apply_filter)
        self.reload_button = QPushButton("Reload")
        self.reload_button.clicked.connect(self.reload)
        self.run_button = QPushButton("Run…")
        self.run_button.setToolTip("Run the selected routine on this thread with new values")
        self.run_button.clicked.connect(self._on_run_clicked)
        header = QHBoxLayout()
        header.addWidget(self.filter_edit, 1)
        header.addWidget(self.run_button)
        header.addWidget(self.reload_button)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(list(COLUMNS))
        self.tree.setColumnWidth(0, 200)
        self.tree.setColumnWidth(WHERE, 160)
        self.tree.itemSelectionChanged.connect(self._on_selection_changed)
        self.tree.itemDoubleClicked.connect(lambda _item, _column: self._on_run_clicked())
        self.skills_item = QTreeWidgetItem(self.tree, ["Skills"])
        self.routines_item = QTreeWidgetItem(self.tree, ["Routines"])
        for section in (self.skills_item, self.routines_item):
            section.setFlags(Qt.ItemFlag.ItemIsEnabled)
            section.setExpanded(True)
        self.detail_view = QPlainTextEdit()
        self.detail_view.setReadOnly(True)
        self.detail_view.setPlaceholderText("Select a skill or a routine")
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.tree)
        splitter.addWidget(self.detail_view)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        self.error_label = build_status_label()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(header)
        layout.addWidget(self.error_label)
        layout.addWidget(splitter, 1)

    def reload(self) -> None:
        self.error_label.hide()
        self.controller.reload()

    def selected(self) -> Entry | None:
        items = self.tree.selectedItems()
        entry = items[0].data(0, ENTRY_ROLE) if items else None
        return (entry[0], entry[1]) if isinstance(entry, (tuple, list)) else None

    def selected_routine(self) -> RoutineInfo | None:
        entry = self.selected()
        if entry is None or entry[0] != "routine":
            return None
        return self.controller.routines[entry[1]]

    def _show(self) -> None:
        chosen = self.selected()
        for section in (self.skills_item, self.routines_item):
            section.takeChildren()
        skills, routines = self.controller.skills, self.controller.routines
        problems = self.controller.routine_problems
        broken = sum(not s.ok for s in skills)
        self.skills_item.setText(0, f"Skills ({len(skills)})")
        self.skills_item.setText(PROBLEM, f"{broken} with problems" if broken else "")
        self.routines_item.setText(0, f"Routines ({len(routines)})")
        self.routines_item.setText(PROBLEM, f"{len(problems)} unreadable" if problems else "")
        _mark_error(self.skills_item, bool(broken))
        _mark_error(self.routines_item, bool(problems))
        for index, skill in enumerate(skills):
            self._add_skill(index, skill)
        for index, routine in enumerate(routines):
            self._add_routine(index, routine)
        for index, problem in enumerate(problems):
            self._add_routine_problem(index, problem)
        self._apply_filter()
        if chosen is not None:
            self._select(chosen)
        self._on_selection_changed()

    def _add_skill(self, index: int, skill: SkillInfo) -> None:
        where = SOURCE_LABELS.get(skill.source, skill.source)
        item = QTreeWidgetItem(self.skills_item, [skill.name, where, skill_problem_text(skill)])
        item.setData(0, ENTRY_ROLE, ("skill", index))
        item.setToolTip(0, skill.description or skill.path)
        item.setToolTip(PROBLEM, skill_problem_text(skill))
        _mark_error(item, not skill.ok)

    def _add_routine(self, index: int, routine: RoutineInfo) -> None:
        problem = CHANGED if routine.needs_approval else ""
        item = QTreeWidgetItem(self.routines_item, [routine.name, routine.goal, problem])
        item.setData(0, ENTRY_ROLE, ("routine", index))
        item.setToolTip(WHERE, routine.goal)
        if routine.needs_approval:
            item.setForeground(PROBLEM, QBrush(QColor(WARNING_COLOUR)))

    def _add_routine_problem(self, index: int, problem: RoutineProblem) -> None:
        name = problem.name or "(routine file)"
        item = QTreeWidgetItem(self.routines_item, [name, problem.path, problem.message])
        item.setData(0, ENTRY_ROLE, ("routine_problem", index))
        item.setToolTip(PROBLEM, problem.message)
        _mark_error(item, True)

    def _select(self, entry: Entry) -> None:
        for section in (self.skills_item, self.routines_item):
            for row in range(section.childCount()):
                item = section.child(row)
                if item is not None and tuple(item.data(0, ENTRY_ROLE)) == entry:
                    item.setSelected(True)
                    return

    def _apply_filter(self) -> None:
        needle = self.filter_edit.text().strip().lower()
        for section in (self.skills_item, self.routines_item):
            for row in range(section.childCount()):
                item = section.child(row)
                if item is None:
                    continue
                text = " ".join(item.text(c) for c in range(len(COLUMNS)))
                text += " " + item.toolTip(0)
                item.setHidden(bool(needle) and needle not in text.lower())

    def _on_selection_changed(self) -> None:
        entry = self.selected()
        self.run_button.setEnabled(self.selected_routine() is not None)
        if entry is None:
            self.detail_view.clear()
            return
        kind, index = entry
        if kind == "routine":
            self.detail_view.setPlainText(_routine_detail(self.controller.routines[index]))
        elif kind == "routine_problem":
            problem = self.controller.routine_problems[index]
            self.detail_view.setPlainText(f"{problem.path}\n\n{problem.message}")
        else:
            self._show_skill(self.controller.skills[index])

    def _show_skill(self, skill: SkillInfo) -> None:
        detail = _skill_detail(skill)
        self.detail_view.setPlainText(detail)
        if any(p.kind == "not_read" for p in skill.problems):
            return

        def on_body(result: SkillReadResult) -> None:
            if self._showing(skill):
                self.detail_view.setPlainText(f"{detail}\n\n{result.body}")

        def on_refused(error: ErrorObject) -> None:
            if self._showing(skill):
                self.detail_view.setPlainText(f"{detail}\n\nNo body to show: {error.message}")

        self.controller.read(skill.path).then(on_body, on_refused)

    def _showing(self, skill: SkillInfo) -> bool:
        entry = self.selected()
        return (
            entry is not None
            and entry[0] == "skill"
            and entry[1] < len(self.controller.skills)
            and self.controller.skills[entry[1]].path == skill.path
        )

    def _on_run_clicked(self) -> None:
        routine = self.selected_routine()
        if routine is not None:
            self.open_run_dialog(routine)

    def open_run_dialog(self, routine: RoutineInfo) -> RoutineRunDialog:
        """Ask for the routine's values (prefilled with the saved ones); OK sends the command."""
        if self.run_dialog is not None:
            self.run_dialog.close()
        dialog = RoutineRunDialog(routine, self)
        dialog.submitted.connect(
            lambda values: self.run_requested.emit(routine_command(routine.name, values))
        )
        dialog.finished.connect(lambda _result: self._forget_run_dialog(dialog))
        self.run_dialog = dialog
        dialog.show()
        return dialog

    def _forget_run_dialog(self, dialog: RoutineRunDialog) -> None:
        if self.run_dialog is dialog:
            self.run_dialog = None
        dialog.deleteLater()

    def open_save_routine(self, plan: PlanInfo) -> SaveRoutineDialog:
        """Ask for the routine's name and parameters, then `routine/save`; a refusal stays in
        the dialog with its reason, a save closes it and lists the routine."""
        if self.save_dialog is not None:
            self.save_dialog.close()
        dialog = SaveRoutineDialog(plan, self)
        dialog.submitted.connect(lambda name, params: self._on_save_submitted(dialog, name, params))
        dialog.finished.connect(lambda _result: self._forget_save_dialog(dialog))
        self.save_dialog = dialog
        dialog.show()
        return dialog

    def _on_save_submitted(
        self, dialog: SaveRoutineDialog, name: str, parameters: dict[str, str]
    ) -> None:
        def on_saved(_info: RoutineInfo) -> None:
            if self.save_dialog is dialog:
                dialog.show_saved()

        def on_refused(error: ErrorObject) -> None:
            if self.save_dialog is dialog:
                dialog.show_error(error)
            else:
                self._show_error(f"Saving routine {name} failed: {error.message}")

        self.controller.save_routine(dialog.plan.id, name, parameters).then(on_saved, on_refused)

    def _forget_save_dialog(self, dialog: SaveRoutineDialog) -> None:
        if self.save_dialog is dialog:
            self.save_dialog = None
        dialog.deleteLater()

    def _show_error(self, message: str) -> None:
        self.error_label.setText(message)
        self.error_label.show()


def _mark_error(item: QTreeWidgetItem, failed: bool) -> None:
    """An error icon on the row and its problem in red (or neither)."""
    tree = item.treeWidget()
    style = tree.style() if tree is not None else None
    if failed and style is not None:
        item.setIcon(0, style.standardIcon(QStyle.StandardPixmap.SP_MessageBoxCritical))
        item.setForeground(PROBLEM, QBrush(QColor(ERROR_COLOUR)))
    else:
        item.setIcon(0, QIcon())
        item.setForeground(PROBLEM, QBrush())
