"""Streamed Markdown, through the real `TranscriptView`: what the author sees while an answer
streams, and after it ends, is what the same text shows when the thread is reopened, block by
block (headings, paragraphs, lists and their items, code, quotes, inline emphasis)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtGui import QTextBlockFormat, QTextDocument, QTextList
from pytestqt.qtbot import QtBot

from desktop.models.transcript import MessageEntry, Transcript
from desktop.views.transcript_view import TranscriptView
from sidecar.protocol import MessageEvent, Token
from tests.desktop.support import message

TIMEOUT_MS = 5000

ANSWER = (
    "Here is the plan, in **three** parts.\n\n"
    "- gather the notes\n- sort them\n- write\n\n"
    "## The notes\n\n"
    "They live in *one* folder.\n\n"
    "1. open it\n\n2. read each file\n\n3. keep what matters\n\n"
    "### Sorting\n\n"
    "```\nsort notes/*.md\n```\n\n"
    "> Keep the oldest first.\n\n"
    "A closing paragraph that is still being written"
)


@pytest.fixture
def view(qtbot: QtBot) -> Iterator[TranscriptView]:
    view = TranscriptView(Transcript())
    qtbot.addWidget(view)
    view.resize(700, 500)
    view.show()
    yield view


BlockShape = tuple[object, ...]


def block_shapes(doc: QTextDocument) -> list[BlockShape]:
    """Per block: its text, heading level, list (which list, its style, the item's number),
    margins, indent, code and quote marks, and each run's weight, italics and fixed pitch."""
    lists: list[QTextList] = []
    shapes: list[BlockShape] = []
    block = doc.begin()
    while block.isValid():
        found = block.textList()
        in_list = None
        if found is not None:
            if found not in lists:
                lists.append(found)
            in_list = (lists.index(found), found.format().style(), found.itemNumber(block))
        fmt = block.blockFormat()
        runs = []
        it = block.begin()
        while not it.atEnd():
            part = it.fragment()
            char = part.charFormat()
            runs.append((part.text(), char.fontWeight(), char.fontItalic(), char.fontFixedPitch()))
            it += 1
        quote = fmt.property(QTextBlockFormat.Property.BlockQuoteLevel)
        shapes.append(
            (
                block.text(),
                fmt.headingLevel(),
                in_list,
                (fmt.topMargin(), fmt.bottomMargin(), fmt.indent()),
                fmt.nonBreakableLines(),
                quote,
                tuple(runs),
            )
        )
        block = block.next()
    return shapes


def _stream(qtbot: QtBot, view: TranscriptView, transcript: Transcript, text: str) -> None:
    for start in range(0, len(text), 5):
        transcript.apply(Token(text=text[start : start + 5]))
    entry = transcript.entry(len(transcript) - 1)
    assert isinstance(entry, MessageEntry)
    stream = view.docs.streams[id(entry)]
    qtbot.waitUntil(lambda: stream.fed == len(text), timeout=TIMEOUT_MS)  # the frame came


def _reopened(view: TranscriptView, transcript: Transcript, text: str) -> list[BlockShape]:
    """The same text as the view shows it after the thread is opened again."""
    transcript.load("t1", (message("assistant", text, "m1"),))
    return block_shapes(
        view.docs.document(transcript.entry(0), view.list_view.delegate.body_width())
    )


def test_a_streamed_answer_shows_block_by_block_what_the_reopened_thread_shows(
    qtbot: QtBot, view: TranscriptView
) -> None:
    transcript = view._transcript
    _stream(qtbot, view, transcript, ANSWER)
    entry = transcript.entry(0)
    assert isinstance(entry, MessageEntry) and entry.streaming
    streaming = block_shapes(view.docs.streams[id(entry)].document)
    tail = streaming[-1]
    # The paragraph being written is plain: no heading, no bullet.
    assert tail[:3] == ("A closing paragraph that is still being written", 0, None)
    finished, _open = ANSWER.rsplit("\n\n", 1)
    assert streaming[:-1] == _fresh(view, finished)

    transcript.apply(MessageEvent(message=message("assistant", ANSWER, "m1")))
    ended = block_shapes(view.docs.document(entry, view.list_view.delegate.body_width()))
    assert ended == _reopened(view, transcript, ANSWER)


def _fresh(view: TranscriptView, text: str) -> list[BlockShape]:
    doc = QTextDocument()
    doc.setDefaultFont(view.docs.font)
    doc.setDocumentMargin(0)
    doc.setMarkdown(text)
    return block_shapes(doc)
