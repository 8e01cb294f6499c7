"""Why `sidecar.host.stdio` forks the SDK's stdio transport, as tests: when one fails, the reason
for the fork is gone (or its footing moved) and the fork should be dropped or revisited."""

from __future__ import annotations

import inspect

import mcp.client.stdio


def test_the_sdk_stdio_reader_still_resplits_its_whole_buffer_for_every_chunk() -> None:
    """The fork exists because `stdio_client` does `(buffer + chunk).split("\\n")` per chunk,
    which is quadratic in a long line. If the SDK reads lines another way, use it again."""
    source = inspect.getsource(mcp.client.stdio)
    assert '(buffer + chunk).split("\\n")' in source


def test_the_private_transport_type_the_fork_builds_on_is_still_there() -> None:
    """The fork yields the SDK's `TransportStreams` from a private module; if it moved, the fork
    must follow (or, better, the SDK now offers a public hook)."""
    from mcp.client._transport import TransportStreams

    assert TransportStreams is not None
