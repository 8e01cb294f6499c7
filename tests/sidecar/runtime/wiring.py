"""The runtime's parts wired as `sidecar.app` wires them, for tests and benchmarks that run
turns in process: the graph's deps (steering from the message queue, the runtime's lanes, the
background desk, the memory parts), the run manager, the message queue and the `TeamDesk`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sidecar.binding.calls import InFlightCalls
from sidecar.context.lazy import LazyMemory
from sidecar.graph.deps import GraphDeps
from sidecar.host.host import ToolHost
from sidecar.llm.types import Planner
from sidecar.plans.coordinator import Coordinator
from sidecar.plans.deps import PlanDeps
from sidecar.plans.profiles import ProfilesFile
from sidecar.protocol import QueuedMessageInfo
from sidecar.runtime.automation_settings import AutomationSettings
from sidecar.runtime.emitter import EventSink
from sidecar.runtime.lanes import Lanes
from sidecar.runtime.live import LiveInterrupts
from sidecar.runtime.queueing import QueueDesk
from sidecar.runtime.runs import RunManager
from sidecar.runtime.team import TeamDesk
from sidecar.store import Store
from sidecar.turn.compiled import CompiledTurn


def _ignore(message: QueuedMessageInfo) -> None:
    del message


@dataclass
class Runtime:
    """One process's runtime: what `sidecar.app.SidecarApp` holds, minus JSON-RPC and the host."""

    store: Store
    runs: RunManager
    queue: QueueDesk
    team: TeamDesk
    live: LiveInterrupts
    memory: LazyMemory
    profiles: ProfilesFile
    automation_settings: AutomationSettings
    coordinator: Coordinator
    deps: GraphDeps | None = None

    async def plan_deps(self) -> PlanDeps:
        """What background plans run with: the graph's own deps, built with the graph."""
        await self.runs.compiled()
        assert self.deps is not None
        return self.deps

    async def aclose(self) -> None:
        await self.queue.aclose()
        await self.team.aclose()
        await self.runs.shutdown()


def wire_runtime(
    store: Store,
    host: ToolHost,
    planner: Callable[[], Planner | None],
    sink: EventSink,
    data_dir: Path,
    *,
    workspace: Path | None = None,
    live: LiveInterrupts | None = None,
    notify_queue: Callable[[QueuedMessageInfo], None] = _ignore,
) -> Runtime:
    """The runtime over `store` and `host`, its settings files under `data_dir`; the graph is
    compiled on the first run, as in the sidecar. `planner` answers for every model (a
    subagent profile's too)."""
    automation = AutomationSettings(data_dir / "automation.json")
    profiles = ProfilesFile(data_dir / "profiles.json")
    live = live or LiveInterrupts(store, InFlightCalls())
    memory = LazyMemory(store)
    coordinator = Coordinator()
    box: list[Runtime] = []

    async def graph_factory() -> CompiledTurn:
        from sidecar.graph.builder import compile_graph
        from sidecar.runtime.checkpoints import open_checkpointer

        wired = box[0]
        deps = GraphDeps(
            store,
            host,
            planner,
            lambda: "configure a model",
            profiles=profiles.profiles,
            coordinator=coordinator,
            workspace=lambda: workspace or data_dir,
            data_dir=data_dir,
            planner_for=lambda _model: planner(),
            steering=wired.queue.take_steering,
            lane=wired.runs.lanes.slot,
            background=wired.team.start,
            pause_background=wired.team.pause,
            memory=await memory.get(),
        )
        wired.deps = deps
        compile_graph(deps, open_checkpointer(store.db))
        return deps.compiled.get()

    runs = RunManager(
        store,
        sink,
        graph_factory,
        live=live,
        profiles=profiles.profiles,
        lanes=Lanes(automation.lane_caps),
    )
    queue = QueueDesk(store, runs, notify_queue, automation.default_mode)

    async def plan_deps() -> PlanDeps:
        return await box[0].plan_deps()

    runtime = Runtime(
        store,
        runs,
        queue,
        TeamDesk(store, sink, live, plan_deps, queue.deliver),
        live,
        memory,
        profiles,
        automation,
        coordinator,
    )
    box.append(runtime)
    return runtime
