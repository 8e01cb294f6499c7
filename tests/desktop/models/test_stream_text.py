"""Streamed text without Qt: appends coalesced per row, Markdown blocks cut when finished."""

from __future__ import annotations

import pytest

from desktop.models.stream_text import AppendBuffer, BlockSplitter


def test_appends_are_joined_per_row_and_taken_once() -> None:
    buffer = AppendBuffer()
    assert not buffer
    for n in range(1000):
        buffer.add(3, f"t{n} ")
    buffer.add(5, "other")
    assert buffer
    assert buffer.take() == [(3, "".join(f"t{n} " for n in range(1000))), (5, "other")]
    assert not buffer and buffer.take() == []


def test_clearing_drops_what_is_pending() -> None:
    buffer = AppendBuffer()
    buffer.add(1, "b")
    buffer.clear()
    assert buffer.take() == []


def _feed_all(text: str, step: int) -> tuple[list[str], str]:
    splitter = BlockSplitter()
    blocks: list[str] = []
    for start in range(0, len(text), step):
        blocks += splitter.feed(text[start : start + step])
    return blocks, splitter.finish()


DOC = (
    "# Title\n\nA paragraph\nwith two lines.\n\n```python\nx = 1\n\n\ny = 2\n```\n"
    "- item one\n- item two\n\n\n\nThe last, open ¶ ünïcode 🙂"
)


@pytest.mark.parametrize("step", [1, 2, 3, 7, 1000])
def test_blocks_come_out_whole_whatever_the_chunking(step: int) -> None:
    blocks, tail = _feed_all(DOC, step)
    assert blocks == [
        "# Title",
        "A paragraph\nwith two lines.",
        "```python\nx = 1\n\n\ny = 2\n```",  # blank lines inside a fence do not end it
        "- item one\n- item two",
    ]
    assert tail == "The last, open ¶ ünïcode 🙂"


def test_the_tail_is_the_open_block_as_written_so_far() -> None:
    splitter = BlockSplitter()
    assert splitter.feed("done\n\nopen line\nand more") == ["done"]
    assert splitter.tail == "open line\nand more"
    assert splitter.feed(" words") == []
    assert splitter.tail == "open line\nand more words"
    assert splitter.finish() == "open line\nand more words"
    assert splitter.tail == ""


def test_an_unclosed_fence_stays_open_until_the_end() -> None:
    splitter = BlockSplitter()
    assert splitter.feed("~~~\ncode\n\nmore code\n") == []
    assert splitter.finish() == "~~~\ncode\n\nmore code\n"


def test_a_long_stream_is_split_in_linear_time() -> None:
    splitter = BlockSplitter()
    blocks: list[str] = []
    for n in range(200_000):
        blocks += splitter.feed(f"w{n}" + ("\n\n" if n % 50 == 49 else " "))
    assert len(blocks) == 4000
    assert blocks[0].startswith("w0 w1 ") and blocks[-1].endswith("w199999")


LOOSE = "Steps:\n\n1. open it\n\n2. read it\n   closely\n\n\n3. keep it\n\n## Next\n\nDone"


@pytest.mark.parametrize("step", [1, 2, 5, 1000])
def test_a_loose_list_is_one_block_however_it_is_chunked(step: int) -> None:
    blocks, tail = _feed_all(LOOSE, step)
    assert blocks == [
        "Steps:",
        "1. open it\n\n2. read it\n   closely\n\n3. keep it",  # one list, as the whole parses
        "## Next",
    ]
    assert tail == "Done"


def test_a_list_ends_as_soon_as_the_next_line_shows_it_is_not_an_item() -> None:
    splitter = BlockSplitter()
    assert splitter.feed("- a\n- b\n\n") == []
    assert splitter.tail == "- a\n- b\n"
    assert splitter.feed("1") == []  # "1." would go on with the list: not known yet
    assert splitter.feed("999 was a year") == ["- a\n- b"]
    assert splitter.tail == "1999 was a year"


def test_a_fence_inside_a_list_item_keeps_the_list_open() -> None:
    splitter = BlockSplitter()
    assert splitter.feed("- a\n\n  ```\n  x\n\n  ```\n\nafter\n") == ["- a\n\n  ```\n  x\n\n  ```"]
    assert splitter.finish() == "after\n"
