"""`SubprocessController`: the run driver shared by every CLI controller.

Provider subclasses supply the command line, the parser, the tool-policy mapping and how to
stop their CLI; this class owns the run lifecycle: spawn, pump stdout through the parser, drain
stderr, heartbeats and idle/overall timeouts, interrupts, resume with fallback to a fresh start,
traces, and the final `OperatorResult`.
"""

from __future__ import annotations

import json
import logging
import os
from abc import abstractmethod
from typing import ClassVar

import anyio
import anyio.abc
from pydantic import JsonValue

from mcp_servers.agents.controllers.config import ControllerConfig
from mcp_servers.agents.controllers.run_state import (
    AttemptIO,
    RunState,
    first_of,
    new_event_stream,
    wait_event,
)
from mcp_servers.agents.controllers.single_run import SingleRunController
from mcp_servers.agents.errors import (
    ControllerNotOpenError,
    RunInProgressError,
)
from mcp_servers.agents.events import Heartbeat, StateHint
from mcp_servers.agents.parsers.base import StreamParser
from mcp_servers.agents.parsers.outcome import (
    RunFacts,
    build_result,
    stderr_summary,
    terminal_event,
)
from mcp_servers.agents.process import AgentProcess, SpawnError, StopStep
from mcp_servers.agents.requests import ResumeRequest, StartRequest
from mcp_servers.agents.results import (
    AppliedPolicy,
    Attempt,
    ErrorCode,
    NormalizedError,
)
from mcp_servers.agents.traces import TraceWriter, default_trace_dir

logger = logging.getLogger(__name__)

_RESUME_NOT_FOUND_WORDS = ("no conversation", "no session", "not found", "no rollout", "no thread")


class SubprocessController(SingleRunController):
    """An `AgentController` over a CLI subprocess; subclass per provider."""

    stdin_pipe: ClassVar[bool] = False

    def __init__(self, config: ControllerConfig) -> None:
        self.config = config
        super().__init__()

    @abstractmethod
    def build_argv(self, request: StartRequest, resume_id: str | None) -> list[str]:
        """The full command line for a start (`resume_id` None) or a resume."""

    @abstractmethod
    def applied_policy(self, request: StartRequest) -> AppliedPolicy:
        """How `request.tool_policy` maps onto this CLI."""

    @abstractmethod
    def make_parser(self, request: StartRequest, resume_id: str | None) -> StreamParser:
        """A fresh parser for one attempt."""

    def child_env(self, request: StartRequest) -> dict[str, str]:
        """The CLI's environment: inherited, then config env, then request env."""
        return {**os.environ, **self.config.env, **request.env}

    def notes(self, request: StartRequest) -> list[str]:
        """Provider remarks recorded in every result (unsupported options and the like)."""
        return []

    async def on_spawned(self, run: RunState, io: AttemptIO) -> None:
        """Called once the CLI runs (Claude writes the prompt here)."""

    def is_final_result(self, run: RunState, io: AttemptIO) -> bool:
        """Whether the result the parser has seen ends the run (asked after every line from the
        first result on). Claude Code runs another turn for messages still waiting."""
        return True

    async def on_terminal(self, run: RunState, io: AttemptIO) -> None:
        """Called when the parser saw the run's last result (Claude closes stdin here)."""

    def on_exited(self, run: RunState) -> None:
        """Called once the CLI has exited, before the parser's `finish` (OpenClaw reads its
        transcript here)."""

    async def stop_process(self, run: RunState, io: AttemptIO) -> None:
        """Stop the CLI for an interrupt or timeout: SIGINT, SIGTERM, SIGKILL to its group."""
        grace = self.config
        await io.proc.stop(
            [
                StopStep("sigint", grace.exit_grace_s),
                StopStep("sigterm", grace.term_grace_s),
                StopStep("sigkill", grace.term_grace_s),
            ]
        )

    async def send_json(
        self, run: RunState, proc: AgentProcess, payload: dict[str, JsonValue]
    ) -> bool:
        """Write one JSON line to the CLI's stdin, recording it in the stdin trace."""
        line = json.dumps(payload, ensure_ascii=False)
        run.trace.write_stdin(line)
        return await proc.write_line(line)

    async def _launch(self, request: StartRequest, resume_id: str | None) -> None:
        if self._group is None:
            raise ControllerNotOpenError("use the controller inside `async with`")
        if self._run is not None and not self._run.done.is_set():
            raise RunInProgressError("the previous run has not finished")
        self._discard_unread_events()
        send, receive = new_event_stream()
        trace = TraceWriter(self.config.trace_dir or default_trace_dir(), request.run_id)
        run = RunState(
            request=request,
            parser=self.make_parser(request, resume_id),
            trace=trace,
            send=send,
            receive=receive,
        )
        run.notes.extend(self.notes(request))
        self._run = run
        await self._group.start(self._drive, run, resume_id)

    async def _drive(
        self,
        run: RunState,
        resume_id: str | None,
        *,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        task_status.started()
        try:
            await self._execute(run, resume_id)
        except anyio.get_cancelled_exc_class():
            run.request_stop("interrupt")
            raise
        except Exception as exc:  # process boundary: a bug must still end the run with a result
            logger.exception("controller run %s crashed", run.request.run_id)
            message = f"{type(exc).__name__}: {exc}"
            run.fatal_error = NormalizedError(code=ErrorCode.INTERNAL_ERROR, message=message)
        finally:
            self._finish(run)

    async def _execute(self, run: RunState, resume_id: str | None) -> None:
        if resume_id is None:
            await self._attempt(run, None)
            return
        await self._attempt(run, resume_id)
        if not self._resume_failed(run):
            return
        failed = run.attempts[-1].model_copy(update={"outcome": "resume_failed"})
        run.attempts[-1] = failed
        acc_error = run.parser.acc.error
        message = acc_error.message if acc_error else stderr_summary(run.stderr_tail)
        detail: dict[str, JsonValue] = {
            "session_id": resume_id,
            "exit_code": run.exit_code,
            "message": message,
        }
        run.emit(StateHint(hint="resume_failed", detail=detail))
        assert isinstance(run.request, ResumeRequest)
        if not run.request.fallback_to_start:
            run.fatal_error = NormalizedError(
                code=ErrorCode.RESUME_FAILED, message=f"could not resume {resume_id}", detail=detail
            )
            return
        run.notes.append(f"resume of {resume_id} failed; started a fresh session instead")
        run.parser = self.make_parser(run.request, None)
        await self._attempt(run, None)

    def _resume_failed(self, run: RunState) -> bool:
        """A resume failed if the CLI did no model work and either never announced a session
        or said the session does not exist."""
        acc = run.parser.acc
        if run.stop_reason is not None or acc.outcome == "success" or acc.output_seen:
            return False
        if run.fatal_error is not None:
            return False
        if not acc.session_announced:
            return True
        text = f"{acc.error.message if acc.error else ''} {run.stderr_tail}".lower()
        return any(word in text for word in _RESUME_NOT_FOUND_WORDS)

    async def _attempt(self, run: RunState, resume_id: str | None) -> None:
        mode = "resume" if resume_id is not None else "start"
        argv = self.build_argv(run.request, resume_id)
        try:
            proc = await AgentProcess.spawn(
                argv,
                cwd=run.request.working_dir,
                env=self.child_env(run.request),
                stdin_pipe=self.stdin_pipe,
            )
        except SpawnError as exc:
            run.fatal_error = exc.error
            run.attempts.append(Attempt(mode=mode, resume_session_id=resume_id, outcome="failed"))
            return
        run.proc = proc
        io = AttemptIO(proc=proc, parser=run.parser)
        try:
            await self._supervise(run, io)
        finally:
            with anyio.CancelScope(shield=True):
                await proc.aclose()
                proc.kill_group()
                run.exit_code = proc.returncode
                run.stderr_tail = proc.stderr_tail
                self.on_exited(run)
                for event in run.parser.finish():
                    run.emit(event)
                outcome = "completed" if run.parser.acc.outcome == "success" else "failed"
                run.attempts.append(
                    Attempt(
                        mode=mode,
                        resume_session_id=resume_id,
                        exit_code=proc.returncode,
                        outcome=outcome,
                    )
                )
                run.pending.clear()

    async def _supervise(self, run: RunState, io: AttemptIO) -> None:
        grace = self.config
        async with anyio.create_task_group() as group:
            group.start_soon(self._pump, run, io)
            group.start_soon(self._drain_stderr, run, io)
            group.start_soon(self._watchdog, run)
            await self.on_spawned(run, io)
            signals = {"eof": io.stdout_done, "terminal": io.terminal, "stop": run.stop_requested}
            reason = await first_of(signals, run.remaining_s())
            if reason is None:
                run.request_stop("timeout")
            if reason == "terminal":
                await self.on_terminal(run, io)
            if reason in ("terminal", "eof"):
                if not await io.proc.wait_exit(grace.exit_grace_s):
                    await io.proc.stop(
                        [StopStep("sigterm", grace.term_grace_s), StopStep("sigkill", 1.0)]
                    )
            else:
                await self.stop_process(run, io)
            # Children of the CLI may still hold stdout open: give them a moment, then kill.
            if not await wait_event(io.stdout_done, grace.term_grace_s):
                io.proc.kill_group()
            await wait_event(io.stdout_done, grace.term_grace_s)
            await wait_event(io.stderr_done, 1.0)
            group.cancel_scope.cancel()

    async def _pump(self, run: RunState, io: AttemptIO) -> None:
        try:
            async for line in io.proc.stdout_lines():
                run.touch()
                run.trace.write_raw(line)
                step = io.parser.feed(line)
                for reply in step.replies:
                    await self.send_json(run, io.proc, reply)
                for event in step.events:
                    run.emit(event)
                if io.parser.acc.outcome is not None and self.is_final_result(run, io):
                    io.terminal.set()
        finally:
            io.stdout_done.set()

    async def _drain_stderr(self, run: RunState, io: AttemptIO) -> None:
        try:
            await io.proc.drain_stderr(run.trace.write_stderr)
        finally:
            io.stderr_done.set()

    async def _watchdog(self, run: RunState) -> None:
        """Emit heartbeats while the CLI is silent; enforce the idle timeout."""
        interval = self.config.heartbeat_interval_s
        idle_limit = run.request.idle_timeout_s
        tick = max(0.01, min(interval, idle_limit or interval) / 4)
        last_beat = anyio.current_time()
        while True:
            await anyio.sleep(tick)
            now = anyio.current_time()
            idle = now - run.last_activity
            if idle_limit is not None and not run.pending and idle >= idle_limit:
                run.request_stop("idle_timeout")
                return
            if idle >= interval and now - last_beat >= interval:
                last_beat = now
                run.emit(Heartbeat(elapsed_s=round(now - run.started_at, 3), idle_s=round(idle, 3)))

    def _finish(self, run: RunState) -> None:
        facts = RunFacts(
            run_id=run.request.run_id,
            provider=self.provider,
            exit_code=run.exit_code,
            stop_reason=run.stop_reason,
            stderr_tail=run.stderr_tail,
            measured_duration_ms=int((anyio.current_time() - run.started_at) * 1000),
            trace=run.trace.ref,
            policy=self.applied_policy(run.request),
            attempts=tuple(run.attempts),
            notes=tuple(run.notes),
            fatal_error=run.fatal_error,
        )
        result = build_result(run.parser.acc, facts)
        run.result = result
        run.emit(terminal_event(result))
        run.trace.write_result(result)
        run.trace.close()
        run.send.close()
        run.done.set()
