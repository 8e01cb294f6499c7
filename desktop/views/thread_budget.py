"""The thread's budget in the run tree's header: a line with spent and remaining (tokens and
cost) and a "Budget…" button that opens `ThreadBudgetDialog` to set, change or remove it."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QWidget,
)

from desktop.controllers.budget import ThreadBudgetController
from desktop.models.thread_budget import describe_budget
from sidecar.protocol import MAX_BUDGET_COST, MAX_BUDGET_TOKENS, BudgetInfo


class ThreadBudgetDialog(QDialog):
    """A token limit and a cost limit (USD), each on or off; `limits()` after it is accepted."""

    def __init__(self, budget: BudgetInfo | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Thread budget")
        self.tokens_check = QCheckBox("Token limit")
        self.tokens_spin = QSpinBox()
        self.tokens_spin.setRange(1, MAX_BUDGET_TOKENS)
        self.tokens_spin.setGroupSeparatorShown(True)
        self.cost_check = QCheckBox("Cost limit (USD)")
        self.cost_spin = QDoubleSpinBox()
        self.cost_spin.setRange(0.0001, MAX_BUDGET_COST)
        self.cost_spin.setDecimals(4)
        tokens = budget.budget_tokens if budget is not None else None
        cost = budget.budget_cost if budget is not None else None
        self.tokens_check.setChecked(tokens is not None)
        self.tokens_spin.setValue(tokens or 100_000)
        self.cost_check.setChecked(cost is not None)
        self.cost_spin.setValue(cost or 1.0)
        self.tokens_check.toggled.connect(self.tokens_spin.setEnabled)
        self.cost_check.toggled.connect(self.cost_spin.setEnabled)
        self.tokens_spin.setEnabled(tokens is not None)
        self.cost_spin.setEnabled(cost is not None)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form = QFormLayout(self)
        form.addRow(
            QLabel("At 80% you are told; at 100% the agent stops and asks you to raise it.")
        )
        form.addRow(self.tokens_check, self.tokens_spin)
        form.addRow(self.cost_check, self.cost_spin)
        form.addRow(buttons)

    def limits(self) -> tuple[int | None, float | None]:
        """(tokens, USD); None where the limit is off. Both None removes the budget."""
        tokens = self.tokens_spin.value() if self.tokens_check.isChecked() else None
        cost = self.cost_spin.value() if self.cost_check.isChecked() else None
        return tokens, cost


class ThreadBudgetWidget(QWidget):
    """Follows `ThreadBudgetState`; the button sends the dialog's limits."""

    def __init__(self, controller: ThreadBudgetController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.label = QLabel()
        self.button = QPushButton("Budget…")
        self.button.setToolTip("Set this thread's token and cost budget")
        self.button.clicked.connect(self._on_button_clicked)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.button)
        controller.state.changed.connect(self._on_changed)
        self._on_changed()

    def build_dialog(self) -> ThreadBudgetDialog:
        result = self.controller.state.result
        return ThreadBudgetDialog(result.budget if result is not None else None, self)

    def _on_button_clicked(self) -> None:
        dialog = self.build_dialog()
        dialog.finished.connect(lambda code: self._on_dialog_finished(dialog, code))
        dialog.open()

    def _on_dialog_finished(self, dialog: ThreadBudgetDialog, code: int) -> None:
        if code == QDialog.DialogCode.Accepted:
            self.controller.set_budget(*dialog.limits())
        dialog.deleteLater()

    def _on_changed(self) -> None:
        state = self.controller.state
        self.button.setEnabled(state.thread_id is not None)
        self.label.setText(state.error or describe_budget(state.result))
