"""What the model sees on a turn: identity files, the token budget, memories, the thread's
summary and recent messages, the skills offered, compaction, and the memory writes staged in
the turn's state until persist flushes them."""
