"""An answer that does not fit its question is refused saying which field and what is wrong,
in one line (it becomes the message of the INVALID_RESUME_VALUE error the window shows)."""

from __future__ import annotations

import pytest

from sidecar.runtime.errors import InvalidResumeValueError
from sidecar.runtime.interrupts import checked_value


def test_a_bad_answer_names_the_field_without_pydantics_text():
    with pytest.raises(InvalidResumeValueError) as refused:
        checked_value("approval", {"decision": "ok"})
    message = str(refused.value)
    assert message.startswith("decision: input should be ")
    assert "\n" not in message and "pydantic.dev" not in message and "input_value" not in message
