"""Which dialog answers which interrupt kind, for the inbox and the main window."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from desktop.views.approval_dialog import ApprovalDialog
from desktop.views.changeset_dialog import ChangesetDialog
from desktop.views.escalation_dialog import EscalationDialog
from desktop.views.form_dialog import FormDialog
from desktop.views.plan_dialog import PlanApprovalDialog
from desktop.views.question_dialog import QuestionDialog
from desktop.views.sampling_dialog import SamplingDialog
from sidecar.protocol import (
    ApprovalInterrupt,
    ChangesetInterrupt,
    EscalationInterrupt,
    FormInterrupt,
    InterruptInfo,
    PlanApprovalInterrupt,
    SamplingInterrupt,
)

InterruptDialog = (
    ApprovalDialog
    | QuestionDialog
    | FormDialog
    | SamplingDialog
    | PlanApprovalDialog
    | EscalationDialog
    | ChangesetDialog
)
ReplyAwareDialog = PlanApprovalDialog | EscalationDialog | ChangesetDialog
"""Dialogs that stay open until the sidecar takes the answer and show a refusal in place."""


def build_interrupt_dialog(
    interrupt: InterruptInfo, thread_title: str, parent: QWidget, task_title: str = ""
) -> InterruptDialog:
    """The dialog for an interrupt's kind (`task_title` names the subagent task, if any)."""
    if isinstance(interrupt, ApprovalInterrupt):
        return ApprovalDialog(interrupt, thread_title, parent)
    if isinstance(interrupt, FormInterrupt):
        return FormDialog(interrupt, thread_title, parent)
    if isinstance(interrupt, SamplingInterrupt):
        return SamplingDialog(interrupt, thread_title, parent)
    if isinstance(interrupt, PlanApprovalInterrupt):
        return PlanApprovalDialog(interrupt, thread_title, parent)
    if isinstance(interrupt, ChangesetInterrupt):
        return ChangesetDialog(interrupt, thread_title, parent)
    if isinstance(interrupt, EscalationInterrupt):
        return EscalationDialog(interrupt, thread_title, parent, task_title)
    return QuestionDialog(interrupt, thread_title, parent)
