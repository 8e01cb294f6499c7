"""A plan's estimate before approval: the median of its profiles' earlier tasks where there
are some, a typical task of its kind where there are none, priced where the price is known."""

from __future__ import annotations

from pathlib import Path

from sidecar.plans.dag import TaskSpec
from sidecar.plans.estimate import TYPICAL_TOKENS, estimate
from sidecar.plans.profiles import DEFAULT_PROFILES
from sidecar.store import Store, open_database

PROFILES = {p.id: p for p in DEFAULT_PROFILES}


def _store_with_history(tmp_path: Path) -> Store:
    """Earlier plans: five succeeded `general` tasks (1k..5k tokens, $0.01..$0.05) and a
    failed one that does not count."""
    store = Store(open_database(tmp_path / "atrium.db"))
    thread = store.create_thread("t")
    store.create_plan("old", thread.id, "earlier work", None)
    specs = [TaskSpec(f"t{n}", f"T{n}", "Do it.", "general").to_json() for n in range(6)]
    store.replace_open_tasks("old", "earlier work", specs)
    for n in range(6):
        task = store.get_task("old", f"t{n}")
        assert task is not None
        status = "succeeded" if n < 5 else "failed"
        store.update_task_from(
            task, status=status, tokens_in=(n + 1) * 900, tokens_out=(n + 1) * 100,
            cost=(n + 1) / 100, finished_at=float(n),
        )  # fmt: skip
    return store


def test_a_profile_with_history_is_estimated_from_its_median(tmp_path: Path) -> None:
    store = _store_with_history(tmp_path)
    tasks = [TaskSpec("a", "A", "Do a.", "general"), TaskSpec("b", "B", "Do b.", "general")]
    guess = estimate(store, tasks, PROFILES, default_model=None)
    assert (guess.tokens, guess.measured) == (2 * 3000, 2)
    assert guess.cost is not None and abs(guess.cost - 0.06) < 1e-9
    assert guess.describe() == (
        "Estimated: about 6,000 tokens, about $0.06 (2 task(s) from their profile's earlier "
        "tasks, the rest typical)."
    )


def test_a_profile_without_history_counts_a_typical_task_of_its_kind(tmp_path: Path) -> None:
    store = Store(open_database(tmp_path / "atrium.db"))
    tasks = [TaskSpec("a", "A", "Do a.", "general"), TaskSpec("c", "C", "Code it.", "claude")]
    guess = estimate(store, tasks, PROFILES, default_model=None)
    assert guess.tokens == TYPICAL_TOKENS["internal"] + TYPICAL_TOKENS["strong"]
    assert guess.cost is None and guess.measured == 0  # no model, no price
    assert guess.describe().startswith("Estimated: about 100,000 tokens (typical tasks")


def test_a_days_worth_of_history_is_read_in_bounded_samples(tmp_path: Path) -> None:
    """Hundreds of earlier tasks: the estimate reads the newest few of each profile."""
    store = Store(open_database(tmp_path / "atrium.db"))
    thread = store.create_thread("t")
    store.create_plan("day", thread.id, "a day", None)
    specs = [TaskSpec(f"t{n}", "T", "Do it.", "general").to_json() for n in range(400)]
    store.replace_open_tasks("day", "a day", specs)
    for n in range(400):
        task = store.get_task("day", f"t{n}")
        assert task is not None
        used = 1000 if n >= 380 else 50_000  # the newest twenty used less
        store.update_task_from(
            task, status="succeeded", tokens_in=used, tokens_out=0, finished_at=float(n)
        )
    guess = estimate(store, [TaskSpec("a", "A", "Do a.", "general")], PROFILES, None)
    assert guess.tokens == 1000
