"""`DspyPlanner`: the one place the agent reaches a model, through DSPy and LiteLLM.

Importing this module is cheap: DSPy and LiteLLM (several seconds of imports) load on the first
`decide` or on `warm_up()`, in a worker thread so the event loop keeps serving meanwhile.

Tool calling takes one of two paths, chosen from LiteLLM's model map when the planner loads:

- native: models LiteLLM knows to support function calling get the tools as the provider's own
  `tools` parameter and answer with real tool calls;
- text: any other model (local, unknown) sees the tools in the prompt and writes its calls in
  DSPy's `tool_calls` field, which DSPy parses.

Either way the answer streams token by token to `on_token`, from DSPy's stream listener on the
`answer` field.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

from sidecar.llm.config import missing_key
from sidecar.llm.types import (
    ChatTurn,
    LMConfig,
    PlannerDecision,
    TokenSink,
    ToolSpec,
)

if TYPE_CHECKING:
    from sidecar.llm._program import Program
    from sidecar.llm._step import StepOutcome

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 120.0
DEFAULT_NUM_RETRIES = 1
_FIELD_MARKER = "[[ ##"


class DspyPlanner:
    """A `Planner` backed by one `dspy.LM` of its own (never DSPy's global configuration).

    `timeout_s` bounds each HTTP request and the whole decision (retries included);
    `num_retries` is DSPy's retry count for transient failures before anything was streamed.
    Cancelling the task awaiting `decide` closes the model's HTTP stream promptly.
    """

    def __init__(
        self,
        config: LMConfig,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        num_retries: int = DEFAULT_NUM_RETRIES,
    ) -> None:
        self.config = config
        self.timeout_s = timeout_s
        self.num_retries = num_retries
        self._program: Program | None = None
        self._loading = anyio.Lock()

    @property
    def native_tool_calling(self) -> bool | None:
        """True/False once loaded: whether tools go through the provider's native tool calling."""
        return None if self._program is None else self._program.native

    async def warm_up(self) -> None:
        """Load DSPy and LiteLLM now (in a worker thread), so the first decision is not slower.

        Raises:
            PlannerError: the model configuration is unusable (code `model_error`).
        """
        await self._ensure_program()

    async def decide(
        self,
        history: Sequence[ChatTurn],
        tools: Sequence[ToolSpec],
        on_token: TokenSink | None = None,
    ) -> PlannerDecision:
        """Ask the model for the next step; answer text streams to `on_token` as it arrives.

        Raises:
            PlannerError: the model failed; `code` is one of the codes in `sidecar.llm._errors`.
        """
        program = await self._ensure_program()
        from sidecar.llm import _errors, _history, _step

        missing = missing_key(self.config)
        if missing is not None:  # the provider would refuse it, each in its own words
            raise _errors.planner_error(_errors.NO_KEY, missing)

        inputs = _history.build_inputs(history, native=program.native)
        observer = _step.LMObserver()
        sink = _Counted(on_token) if on_token is not None else None
        try:
            with anyio.fail_after(self.timeout_s):
                outcome = await _step.predict_step(program, inputs, tools, sink, observer)
        except TimeoutError as exc:
            detail = f"no decision within {self.timeout_s:g} s"
            raise _errors.planner_error(_errors.TIMEOUT, detail) from exc
        except _errors.MODEL_FAILURES as exc:
            streamed = sink is not None and sink.count > 0
            secret = self.config.api_key
            raise _errors.to_planner_error(exc, observer.chain, secret, streamed=streamed) from exc
        return await _decision(outcome, observer.text, on_token)

    async def _ensure_program(self) -> Program:
        async with self._loading:
            if self._program is None:
                self._program = await anyio.to_thread.run_sync(self._build_program)
            return self._program

    def _build_program(self) -> Program:
        """Import DSPy and build the LM (worker thread: imports take seconds)."""
        from sidecar.llm import _errors, _program

        if "litellm" not in sys.modules:  # the warm-up's longest import comes next
            log.info("importing LiteLLM")

        try:
            return _program.build_program(
                self.config, timeout_s=self.timeout_s, num_retries=self.num_retries
            )
        except ValueError as exc:  # DSPy's refusal of a malformed model string
            secret = self.config.api_key
            raise _errors.planner_error(_errors.MODEL_ERROR, str(exc), secret) from exc


async def aclose_model_clients() -> None:
    """Close every async HTTP client LiteLLM has cached (all planners share them), and those of
    the coalescing streaming engines (OpenAI-compatible and Anthropic).

    LiteLLM keeps one client per provider and event loop for the life of the process; call this
    once at sidecar shutdown, on the loop that made the requests (tests call it per test), so no
    socket is left to the garbage collector. A no-op when no planner ever loaded LiteLLM, or
    while one is still loading it (see `_imported`).
    """
    litellm: Any = _imported("litellm")
    if litellm is not None:
        await litellm.close_litellm_async_clients()
    engines: Any = _imported("sidecar.llm._coalescing")
    if engines is not None:
        await engines.aclose_all()


def _imported(name: str) -> ModuleType | None:
    """The module once its import has finished, else None.

    A module that a worker thread is still importing (the warm-up, when the app quits during
    it) is already in `sys.modules`, half made: without most of its names, and without any
    client, since no request can have gone through it yet. `__spec__._initializing` is how the
    import system itself tells (its "partially initialized module" error).
    """
    module = sys.modules.get(name)
    if module is None or getattr(module.__spec__, "_initializing", False):
        return None
    return module


class _Counted:
    """A token sink that counts what reached the author (a failure after some did cut the
    answer off)."""

    def __init__(self, sink: TokenSink) -> None:
        self._sink = sink
        self.count = 0

    async def __call__(self, text: str) -> None:
        self.count += 1
        await self._sink(text)


async def _decision(
    outcome: StepOutcome, raw_text: str, on_token: TokenSink | None
) -> PlannerDecision:
    """Turn the step's outcome into a `PlannerDecision`, salvaging plain-text answers.

    Raises:
        PlannerError: `bad_output` when the model gave neither tool calls nor an answer.
    """
    from sidecar.llm import _errors

    if outcome.tool_calls:
        return PlannerDecision(
            kind="tool_calls",
            text=outcome.answer,
            tool_calls=outcome.tool_calls,
            usage=outcome.usage,
        )
    answer = outcome.answer
    if not answer.strip():
        # A model that ignores the field markers and just talks: its text is the answer.
        salvage = raw_text.strip()
        if not salvage or _FIELD_MARKER in salvage:
            raise _errors.planner_error(_errors.BAD_OUTPUT, "neither an answer nor tool calls")
        answer = salvage
        if on_token is not None and not outcome.streamed:
            await on_token(answer)
    return PlannerDecision(kind="answer", text=answer, usage=outcome.usage)
