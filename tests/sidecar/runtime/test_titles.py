"""An untitled thread is named after the author's message when the turn it started ends; a
title the author gave stays."""

from __future__ import annotations

import pytest

from sidecar.protocol import DEFAULT_THREAD_TITLE, ThreadRenamed
from sidecar.runtime.titles import TITLE_LENGTH, title_from_message
from tests.sidecar.runtime.conftest import Rig
from tests.sidecar.runtime.scripted import answer

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("Plan the garden", "Plan the garden"),
        ("\n\n## Plan   the **garden**\nwith roses", "Plan the garden"),
        ("- 1. `fix` the bug", "fix the bug"),
        (
            "Write a long letter to the council about the bridge over the river Wye",
            "Write a long letter to the council about the…",
        ),
        ("x" * 60, "x" * (TITLE_LENGTH - 1) + "…"),
        (" \n  \n", None),
    ],
)
def test_a_title_is_the_first_line_with_words_shortened_at_a_word(text: str, title: str | None):
    assert title_from_message(text) == title
    assert title is None or len(title) <= TITLE_LENGTH


async def test_an_untitled_thread_is_named_after_its_first_message_when_the_turn_ends(rig: Rig):
    thread = rig.store.create_thread(DEFAULT_THREAD_TITLE)
    rig.planner.script += [answer("Tulips first."), answer("Then roses.")]
    first = await rig.finish(await rig.runs.start(thread.id, "Plan the **garden** for spring"))
    assert [e.event.type for e in first][-2:] == ["thread_renamed", "run_finished"]
    assert first[-2].event == ThreadRenamed(title="Plan the garden for spring")
    assert rig.store.get_thread(thread.id).title == "Plan the garden for spring"

    second = await rig.finish(await rig.runs.start(thread.id, "And the hedge?"))
    assert "thread_renamed" not in [e.event.type for e in second]
    assert rig.store.get_thread(thread.id).title == "Plan the garden for spring"


async def test_a_title_the_author_gave_is_kept(rig: Rig):
    thread = rig.store.create_thread(DEFAULT_THREAD_TITLE)
    rig.store.rename_thread(thread.id, "Garden")
    rig.planner.script.append(answer("Tulips first."))
    events = await rig.finish(await rig.runs.start(thread.id, "Plan the garden"))
    assert "thread_renamed" not in [e.event.type for e in events]
    assert rig.store.get_thread(thread.id).title == "Garden"


async def test_a_direct_command_names_nothing_and_the_next_message_does(rig: Rig):
    thread = rig.store.create_thread(DEFAULT_THREAD_TITLE)
    await rig.finish(await rig.runs.start(thread.id, "/tools"))
    assert rig.store.get_thread(thread.id).title == DEFAULT_THREAD_TITLE
    rig.planner.script.append(answer("Tulips first."))
    await rig.finish(await rig.runs.start(thread.id, "Plan the garden"))
    assert rig.store.get_thread(thread.id).title == "Plan the garden"
