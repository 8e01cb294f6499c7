"""The full handler table: imports every handler module, which registers its methods.

Apart from `registry` so that handler modules (which import the registry) and the list of them
(which imports the modules) form no import circle.
"""

from __future__ import annotations

from sidecar.handlers.registry import Registry, registry


def load_all() -> Registry:
    """Import every handler module (registering them) and return the registry."""
    from sidecar.handlers import (
        agents,
        automation,
        features,
        grants,
        heartbeat,
        identity,
        lifecycle,
        memory,
        plans,
        queue,
        routines,
        runs,
        schedules,
        servers,
        settings,
        skills,
        threads,
        tools,
    )

    del agents, automation, features, grants, heartbeat, identity, lifecycle, memory, plans
    del queue, routines, runs, schedules, servers, settings, skills, threads, tools
    return registry
