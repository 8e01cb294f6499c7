"""The token budget of one turn's context, and how it is shared out.

The window is the model's input window (LiteLLM's model info, or the configured
`ATRIUM_CONTEXT_TOKENS`, or `DEFAULT_WINDOW` without a model). A quarter of it (at least 1,024,
at most 16,384 tokens) is kept free for the tool listing and the answer; the rest is the input
budget, shared in this order:

| part | share of the input budget |
|---|---|
| identity files (pinned; each file) | 10 % |
| pinned memories (never dropped; a warning past the share) | 10 % |
| relevant memories | 10 % |
| the thread's summary | 10 % |
| relevant older messages | 5 % |
| the skills listing (names and descriptions; `sidecar.context.skills`) | 2 % |
| recent messages | what is left, at most 50 % |

When the thread's unsummarized messages outgrow the recent share, the older part is compacted;
compaction keeps the newest messages that fill half the recent share, so the next compaction
comes only after that half has filled again.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_WINDOW = 32_000
MIN_WINDOW = 1_000


@dataclass(frozen=True, slots=True)
class ContextBudget:
    window: int

    @property
    def reserve(self) -> int:
        return min(max(self.window // 4, 1_024), 16_384, self.window // 2)

    @property
    def input(self) -> int:
        return self.window - self.reserve

    def share(self, fraction: float) -> int:
        return int(self.input * fraction)

    @property
    def identity_file(self) -> int:
        return self.share(0.10)

    @property
    def pinned(self) -> int:
        return self.share(0.10)

    @property
    def memories(self) -> int:
        return self.share(0.10)

    @property
    def summary(self) -> int:
        return self.share(0.10)

    @property
    def older(self) -> int:
        return self.share(0.05)

    @property
    def skills(self) -> int:
        return self.share(0.02)

    @property
    def recent(self) -> int:
        return self.share(0.50)


def budget_for(window: int | None) -> ContextBudget:
    return ContextBudget(max(window or DEFAULT_WINDOW, MIN_WINDOW))
