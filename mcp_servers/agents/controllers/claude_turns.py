"""Which of the host's user messages a running Claude Code has taken into a turn.

Claude Code (stream-json input) reads user messages while a turn runs and queues them; once the
turn's `result` is out it takes everything queued into one next turn (the texts joined, one more
`result`), then the next batch, and so on. With `--replay-user-messages` it echoes each message
as it takes it (`isReplay`, carrying the `uuid` the host gave it; a batch's last message is echoed
with the joined text). Observed with Claude Code 2.1.197 against a scripted model.

So a run is over at a `result` after which no message the host wrote is still waiting: the prompt
is always the first turn's, an echo settles its message and every one written before it (the
queue is first in, first out), and an echo the ledger cannot match settles the oldest message
still waiting (a message the CLI rewrote, such as an expanded command).
"""

from __future__ import annotations

from collections.abc import Sequence


class TurnLedger:
    """The messages written after the prompt of one CLI process, until each is taken."""

    def __init__(self, prompt_id: str) -> None:
        self._known: set[str] = {prompt_id}
        self._waiting: list[str] = []
        self._echoes_seen = 0

    @property
    def waiting(self) -> int:
        """How many messages written after the prompt have not been taken yet."""
        return len(self._waiting)

    def written(self, message_id: str) -> None:
        """A message went to the CLI's stdin after the prompt."""
        self._known.add(message_id)
        self._waiting.append(message_id)

    def withdraw(self, message_id: str) -> None:
        """A message that never reached the CLI (its stdin was closed)."""
        if message_id in self._waiting:
            self._waiting.remove(message_id)

    def take_echoes(self, echoed: Sequence[str | None]) -> None:
        """Settle the messages the CLI echoed since the last call (`echoed` is every echo of
        the process so far, in order)."""
        for message_id in echoed[self._echoes_seen :]:
            self._settle(message_id)
        self._echoes_seen = len(echoed)

    def _settle(self, message_id: str | None) -> None:
        if message_id in self._waiting:
            del self._waiting[: self._waiting.index(message_id) + 1]
        elif message_id not in self._known and self._waiting:
            del self._waiting[0]
