"""`ComposerController`: the composer's MCP prompts and resources, as requests. No Qt.

The prompt list is cached: the composer asks for a refresh when it gains focus and the client's
`server/status` notifications trigger one, so completing `/` never waits on the sidecar. Like the
other controllers it never waits itself: each method returns the request's `PendingRequest` and
the composer chains `.then` for what it shows.
"""

from __future__ import annotations

import logging

from desktop.ipc.api import SidecarApi
from desktop.ipc.pending import PendingRequest
from desktop.models.emitter import Emitter
from desktop.models.prompts import CommandChoice, choices_for
from sidecar.protocol import (
    ErrorObject,
    FeatureErrorCode,
    PromptGetParams,
    PromptGetResult,
    PromptInfo,
    PromptListParams,
    PromptListResult,
    ResourceAttachResult,
    ResourceListParams,
    ResourceListResult,
    ResourceRef,
    ServerStatusParams,
)

logger = logging.getLogger(__name__)

_ERROR_LEADS: dict[int, str] = {
    FeatureErrorCode.SERVER_UNAVAILABLE: "The server is not connected",
    FeatureErrorCode.SERVER_REFUSED: "The server refused",
    FeatureErrorCode.FEATURE_UNSUPPORTED: "The sidecar does not offer this",
}


def feature_error_text(error: ErrorObject) -> str:
    """A sentence for an error of `prompt/*` or `resource/*`, led by what its code means."""
    lead = _ERROR_LEADS.get(error.code)
    return f"{lead}: {error.message}" if lead else error.message


class ComposerController:
    """Cached `prompt/list`, plus `prompt/get`, `resource/list` and `resource/attach`.

    Events:
        prompts_changed(): `prompts` was replaced by a fresh list.
    """

    def __init__(self, api: SidecarApi) -> None:
        self.prompts_changed: Emitter[[]] = Emitter()
        self._api = api
        self.prompts: tuple[PromptInfo, ...] = ()
        self._listing: PendingRequest[PromptListResult] | None = None
        self._list_again = False

    def choices(self) -> list[CommandChoice]:
        """What `/` offers now: the built-in commands and the cached prompts."""
        return choices_for(self.prompts)

    def refresh_prompts(self) -> PendingRequest[PromptListResult]:
        """`prompt/list` of every connected server into `prompts`.

        One listing at a time: asked again while one is in flight, it returns that one and lists
        once more after it (the first may predate the change that prompted the second). A failed
        listing keeps the cached prompts.
        """
        if self._listing is not None and not self._listing.done:
            self._list_again = True
            return self._listing
        self._list_again = False
        listing = self._api.prompt_list(PromptListParams())
        self._listing = listing
        return listing.then(self._on_prompt_list, self._on_prompt_list_failed)

    def handle_status(self, _params: ServerStatusParams) -> None:
        """A server connected, died or changed: its prompts may have come or gone."""
        self.refresh_prompts()

    def expand(
        self, server: str, name: str, arguments: dict[str, str]
    ) -> PendingRequest[PromptGetResult]:
        """`prompt/get`; chain `.then` for the `PromptGetResult` (its `text` is the draft)."""
        params = PromptGetParams(server=server, name=name, arguments=arguments)
        return self._api.prompt_get(params)

    def list_resources(self) -> PendingRequest[ResourceListResult]:
        """`resource/list` of every connected server; chain `.then` for `ResourceListResult`."""
        return self._api.resource_list(ResourceListParams())

    def attach(self, server: str, uri: str) -> PendingRequest[ResourceAttachResult]:
        """`resource/attach`; chain `.then` for the `ResourceAttachResult` text block."""
        return self._api.resource_attach(ResourceRef(server=server, uri=uri))

    def _on_prompt_list(self, result: PromptListResult) -> None:
        self.prompts = result.prompts
        self.prompts_changed.emit()
        self._list_more()

    def _on_prompt_list_failed(self, error: ErrorObject) -> None:
        logger.info("listing prompts failed: %s (%s)", error.message, error.code)
        self._list_more()

    def _list_more(self) -> None:
        self._listing = None
        if self._list_again:
            self.refresh_prompts()
