"""JSON-RPC 2.0 envelopes and error codes, shared by the sidecar and the desktop.

One JSON object per line in each direction. Requests carry an `id`; notifications do not.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

RequestId: TypeAlias = StrictInt | StrictStr


class ErrorCode(IntEnum):
    """Spec error codes plus Atrium's application codes (-32000..-32099 is the server range)."""

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    REQUEST_CANCELLED = -32800

    THREAD_NOT_FOUND = -32001
    THREAD_BUSY = -32002
    NO_SUCH_INTERRUPT = -32003
    INVALID_RESUME_VALUE = -32004
    NOTHING_TO_RESUME = -32005
    SETTINGS_INVALID = -32006
    KEYRING_UNAVAILABLE = -32007
    SHUTTING_DOWN = -32008
    NOT_INITIALIZED = -32009
    DISK_FULL = -32010
    """A write found no room: nothing was changed (`data.folder` names the folder); free space
    and retry."""

    SERVER_NOT_FOUND = -32020
    SERVER_EXISTS = -32021
    CONFIG_INVALID = -32022
    GRANT_NOT_FOUND = -32023


class _Frame(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    jsonrpc: Literal["2.0"] = "2.0"


class Request(_Frame):
    id: RequestId
    method: str
    params: dict[str, Any] | None = None


class Notification(_Frame):
    method: str
    params: dict[str, Any] | None = None


class ErrorObject(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    code: int
    message: str
    data: Any = None


class Response(_Frame):
    """A reply. Exactly one of `result` and `error` is meaningful; `id` is None only for
    errors about frames whose id could not be read (parse errors)."""

    id: RequestId | None
    result: Any = None
    error: ErrorObject | None = None


class CancelParams(BaseModel):
    """Params of the `$/cancelRequest` notification."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: RequestId = Field(description="The id of the request to cancel.")


CANCEL_REQUEST = "$/cancelRequest"


class RpcError(Exception):
    """A typed failure of a request: raised by handlers, sent as a JSON-RPC error reply."""

    def __init__(self, code: ErrorCode | int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = int(code)
        self.message = message
        self.data = data

    def to_error(self) -> ErrorObject:
        return ErrorObject(code=self.code, message=self.message, data=self.data)
