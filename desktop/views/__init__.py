"""Windows, panels and dialogs: thin Qt views over `desktop.models`, with the Qt item models
they show (`*_model`). Views act through `desktop.controllers`, never `desktop.ipc`."""

from desktop.views.approval_dialog import ApprovalDialog
from desktop.views.main_window import MainWindow
from desktop.views.question_dialog import QuestionDialog
from desktop.views.settings_dialog import SettingsDialog

__all__ = ["ApprovalDialog", "MainWindow", "QuestionDialog", "SettingsDialog"]
