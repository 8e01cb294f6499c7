"""`FormDialog`: an MCP server asks for information; the form is generated from its JSON schema.

The schema is the flat object MCP elicitation allows: text (with `format` email, uri, date or
date-time), numbers, integers, booleans, single-select enums (`enum`, optionally `enumNames`, or
`oneOf` of `const`/`title`) and multi-select enums (arrays of those). Required fields are marked
with `*`, defaults are filled in. Submit sends `accept` with the content, Decline an explicit no,
Cancel a dismissal; closing the window leaves the request pending in the inbox.
"""

from __future__ import annotations

from html import escape
from typing import Any

from PySide6.QtCore import QDate, QDateTime, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from sidecar.protocol import FormInterrupt, FormValue

FieldValue = str | int | float | bool | list[str] | None
_FORMAT_HINTS = {
    "email": "name@example.com",
    "uri": "https://…",
    "date": "YYYY-MM-DD",
    "date-time": "YYYY-MM-DDThh:mm:ss",
}


class FieldError(ValueError):
    """A field's input does not fit its schema; the message says how."""


def _choices(spec: dict[str, Any]) -> list[tuple[str, str]] | None:
    """(label, value) pairs of a single-select enum, or None if the field is not one."""
    if isinstance(spec.get("enum"), list):
        values = [str(v) for v in spec["enum"]]
        names = spec.get("enumNames")
        labels = [str(n) for n in names] if isinstance(names, list) else values
        return list(zip(labels, values, strict=False))
    options = spec.get("oneOf") or spec.get("anyOf")
    if isinstance(options, list):
        return [(str(o.get("title", o.get("const"))), str(o.get("const"))) for o in options]
    return None


class FormField:
    """One property: a label, an input widget, and the value read back from it."""

    def __init__(self, name: str, spec: dict[str, Any], required: bool) -> None:
        self.name = name
        self.spec = spec
        self.required = required
        title = str(spec.get("title") or name)
        self.label = QLabel(escape(title) + (" <b>*</b>" if required else ""))
        self.label.setToolTip(str(spec.get("description") or ""))
        self.widget = self._build()
        self.widget.setToolTip(str(spec.get("description") or ""))

    def _build(self) -> QWidget:
        raise NotImplementedError

    def read(self) -> FieldValue:
        """The value, or None when left empty.

        Raises:
            FieldError: the input does not fit the schema.
        """
        raise NotImplementedError


class TextField(FormField):
    def _build(self) -> QWidget:
        self.edit = QLineEdit()
        fmt = self.spec.get("format")
        hint = _FORMAT_HINTS.get(str(fmt)) if fmt else None
        self.edit.setPlaceholderText(hint or str(self.spec.get("description") or ""))
        if isinstance(self.spec.get("default"), str):
            self.edit.setText(self.spec["default"])
        return self.edit

    def read(self) -> FieldValue:
        text = self.edit.text().strip()
        if not text:
            return None
        spec = self.spec
        if "minLength" in spec and len(text) < int(spec["minLength"]):
            raise FieldError(f"at least {spec['minLength']} characters")
        if "maxLength" in spec and len(text) > int(spec["maxLength"]):
            raise FieldError(f"at most {spec['maxLength']} characters")
        return self._check_format(text)

    def _check_format(self, text: str) -> str:
        fmt = self.spec.get("format")
        if fmt == "email" and ("@" not in text or text.startswith("@") or text.endswith("@")):
            raise FieldError("an email address")
        if fmt == "uri" and "://" not in text:
            raise FieldError("a full address, like https://example.com")
        if fmt == "date" and not QDate.fromString(text, Qt.DateFormat.ISODate).isValid():
            raise FieldError("a date as YYYY-MM-DD")
        if fmt == "date-time" and not QDateTime.fromString(text, Qt.DateFormat.ISODate).isValid():
            raise FieldError("a date and time as YYYY-MM-DDThh:mm:ss")
        return text


class NumberField(FormField):
    def _build(self) -> QWidget:
        self.edit = QLineEdit()
        bounds = [f"{k} {self.spec[k]}" for k in ("minimum", "maximum") if k in self.spec]
        kind = "whole number" if self.spec.get("type") == "integer" else "number"
        self.edit.setPlaceholderText(", ".join([kind, *bounds]))
        default = self.spec.get("default")
        if isinstance(default, int | float) and not isinstance(default, bool):
            self.edit.setText(str(default))
        return self.edit

    def read(self) -> FieldValue:
        text = self.edit.text().strip()
        if not text:
            return None
        integer = self.spec.get("type") == "integer"
        try:
            number: int | float = int(text) if integer else float(text)
        except ValueError as exc:
            raise FieldError("a whole number" if integer else "a number") from exc
        if "minimum" in self.spec and number < float(self.spec["minimum"]):
            raise FieldError(f"at least {self.spec['minimum']}")
        if "maximum" in self.spec and number > float(self.spec["maximum"]):
            raise FieldError(f"at most {self.spec['maximum']}")
        return number


class BoolField(FormField):
    def _build(self) -> QWidget:
        self.check = QCheckBox(str(self.spec.get("description") or ""))
        self.check.setChecked(self.spec.get("default") is True)
        return self.check

    def read(self) -> FieldValue:
        return self.check.isChecked()


class ChoiceField(FormField):
    def _build(self) -> QWidget:
        self.combo = QComboBox()
        if not self.required:
            self.combo.addItem("—", None)
        for label, value in _choices(self.spec) or []:
            self.combo.addItem(label, value)
        default = self.spec.get("default")
        if default is not None:
            index = self.combo.findData(str(default))
            if index >= 0:
                self.combo.setCurrentIndex(index)
        return self.combo

    def read(self) -> FieldValue:
        value = self.combo.currentData()
        return None if value is None else str(value)


class MultiChoiceField(FormField):
    def _build(self) -> QWidget:
        self.list = QListWidget()
        items = self.spec.get("items") if isinstance(self.spec.get("items"), dict) else {}
        default = self.spec.get("default")
        chosen = {str(v) for v in default} if isinstance(default, list) else set[str]()
        for label, value in _choices(items or {}) or []:
            item = QListWidgetItem(label)
            item.setData(Qt.ItemDataRole.UserRole, value)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            checked = value in chosen
            item.setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
            self.list.addItem(item)
        self.list.setMaximumHeight(24 * max(2, min(self.list.count(), 6)))
        return self.list

    def read(self) -> FieldValue:
        items = [self.list.item(row) for row in range(self.list.count())]
        chosen = [
            str(item.data(Qt.ItemDataRole.UserRole))
            for item in items
            if item.checkState() == Qt.CheckState.Checked
        ]
        if not chosen:
            return None
        if "minItems" in self.spec and len(chosen) < int(self.spec["minItems"]):
            raise FieldError(f"choose at least {self.spec['minItems']}")
        if "maxItems" in self.spec and len(chosen) > int(self.spec["maxItems"]):
            raise FieldError(f"choose at most {self.spec['maxItems']}")
        return chosen


def build_field(name: str, spec: dict[str, Any], required: bool) -> FormField:
    """The field for one schema property (unknown types fall back to text)."""
    kind = spec.get("type")
    if kind == "boolean":
        return BoolField(name, spec, required)
    if kind in ("number", "integer"):
        return NumberField(name, spec, required)
    if kind == "array":
        return MultiChoiceField(name, spec, required)
    if _choices(spec) is not None:
        return ChoiceField(name, spec, required)
    return TextField(name, spec, required)


class FormDialog(QDialog):
    """Shows one form interrupt and emits `answered(interrupt_id, FormValue)`."""

    answered = Signal(str, object)

    def __init__(
        self, interrupt: FormInterrupt, thread_title: str = "", parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.interrupt = interrupt
        self.thread_id: str | None = None
        self.setWindowTitle(interrupt.title or "Information requested")
        self.setModal(False)
        layout = QVBoxLayout(self)
        self._build_header(layout, thread_title)
        schema = interrupt.requested_schema
        required = {str(n) for n in schema.get("required") or []}
        properties: dict[str, Any] = schema.get("properties") or {}
        self.fields = {
            name: build_field(name, spec if isinstance(spec, dict) else {}, name in required)
            for name, spec in properties.items()
        }
        if self.fields:
            layout.addWidget(self._build_form(), 1)
        self.error_label = QLabel("")
        self.error_label.setStyleSheet("color: #cf222e;")
        self.error_label.setWordWrap(True)
        self.error_label.hide()
        layout.addWidget(self.error_label)
        self._build_buttons(layout)
        self.resize(560, 600 if self.fields else 260)

    def _build_header(self, layout: QVBoxLayout, thread_title: str) -> None:
        where = f" (in “{thread_title}”)" if thread_title else ""
        self.server_label = QLabel(
            f"<b>{escape(self.interrupt.server)}</b> asks for information{escape(where)}"
        )
        self.message_label = QLabel(self.interrupt.message)
        self.message_label.setTextFormat(Qt.TextFormat.PlainText)
        self.message_label.setWordWrap(True)
        layout.addWidget(self.server_label)
        layout.addWidget(self.message_label)
        self.link_label = QLabel()
        url = self.interrupt.url
        if url:
            self.link_label.setText(f'<a href="{escape(url, quote=True)}">{escape(url)}</a>')
            self.link_label.setOpenExternalLinks(True)
            self.link_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
            layout.addWidget(self.link_label)

    def _build_form(self) -> QScrollArea:
        body = QWidget()
        form = QFormLayout(body)
        for field in self.fields.values():
            form.addRow(field.label, field.widget)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(body)
        return scroll

    def _build_buttons(self, layout: QVBoxLayout) -> None:
        row = QHBoxLayout()
        self.cancel_button = QPushButton("Cancel")
        self.decline_button = QPushButton("Decline")
        self.submit_button = QPushButton("Accept" if self.interrupt.url else "Submit")
        self.cancel_button.clicked.connect(lambda: self._finish(FormValue(action="cancel")))
        self.decline_button.clicked.connect(lambda: self._finish(FormValue(action="decline")))
        self.submit_button.clicked.connect(self._on_submit_clicked)
        row.addStretch(1)
        for button in (self.cancel_button, self.decline_button, self.submit_button):
            row.addWidget(button)
        self.submit_button.setDefault(True)
        layout.addLayout(row)

    def content(self) -> dict[str, FieldValue]:
        """The filled-in values (empty optional fields left out).

        Raises:
            FieldError: a field does not fit, or a required one is empty (names the field).
        """
        content: dict[str, FieldValue] = {}
        for name, field in self.fields.items():
            title = str(field.spec.get("title") or name)
            try:
                value = field.read()
            except FieldError as exc:
                raise FieldError(f"{title}: {exc}") from exc
            if value is None:
                if field.required:
                    raise FieldError(f"{title} is required")
                continue
            content[name] = value
        return content

    def _on_submit_clicked(self) -> None:
        try:
            content = self.content()
        except FieldError as exc:
            self.error_label.setText(str(exc))
            self.error_label.show()
            return
        self._finish(FormValue(action="accept", content=None if self.interrupt.url else content))

    def _finish(self, value: FormValue) -> None:
        self.answered.emit(self.interrupt.id, value)
        self.accept()
