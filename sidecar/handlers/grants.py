"""grant/list, grant/revoke: standing approvals, as the grants panel shows them."""

from __future__ import annotations

from sidecar.handlers.registry import registry
from sidecar.handlers.services import Services
from sidecar.protocol import (
    GRANT_LIST,
    GRANT_REVOKE,
    Done,
    ErrorCode,
    GrantInfo,
    GrantListResult,
    GrantRevokeParams,
    RpcError,
)


@registry.method(GRANT_LIST)
async def list_grants(svc: Services, params: Done) -> GrantListResult:
    del params
    return GrantListResult(
        grants=tuple(
            GrantInfo(
                thread_id=g.thread_id,
                thread_title=g.thread_title,
                server=g.server,
                tool=g.tool,
                created_at=g.created_at,
            )
            for g in svc.store.all_grants()
        )
        + tuple(
            GrantInfo(
                thread_id=v.thread_id,
                thread_title=v.thread_title,
                server=v.grant.server,
                tool=v.grant.tool,
                created_at=v.grant.created_at,
                plan_id=v.grant.plan_id,
                plan_goal=v.goal,
                task_id=v.grant.task_id,
                paths=v.grant.paths,
            )
            for v in svc.store.live_plan_grants()
        )
    )


@registry.method(GRANT_REVOKE)
async def revoke_grant(svc: Services, params: GrantRevokeParams) -> Done:
    if params.plan_id is not None:
        task = params.task_id or ""
        found = svc.store.revoke_plan_grant(params.plan_id, task, params.server, params.tool)
    else:
        found = svc.store.revoke_grant(params.thread_id, params.server, params.tool)
    if not found:
        raise RpcError(ErrorCode.GRANT_NOT_FOUND, "no such grant")
    return Done()
