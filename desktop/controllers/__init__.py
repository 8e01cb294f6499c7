"""Controllers: the author's actions as typed requests, replies and notifications as state. No Qt.

Each controller sends through `desktop.ipc.api.SidecarApi` and never waits: a method returns the
request's `PendingRequest` at once, and the reply updates a model in `desktop.models` that the
views follow. Views reach the sidecar only through a controller; what they hold of a request
in flight is the `PendingRequest` handle, which this package passes on, so no view imports
`desktop.ipc`.
"""

from desktop.ipc.pending import PendingRequest

__all__ = ["PendingRequest"]
