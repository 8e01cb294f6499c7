"""What every built-in server shares as an MCP citizen: its version, the capabilities it really
has, and how it is served (stdio, or streamable HTTP with `--http HOST:PORT`).

- `build_mcp_server(...)` makes the `MCPServer` with `serverInfo.version` set to Atrium's package
  version, and without the prompt and resource handlers the SDK registers on every `MCPServer`:
  capabilities are derived from the registered handlers, so an `MCPServer` with no prompts or
  resources would otherwise advertise both. The SDK (mcp 2.3) has no public way to leave them
  out; `tests/mcp_servers/test_citizenship.py` fails when a plain `MCPServer` stops advertising
  them, so this can go. Arguments that do not fit a tool's input schema are refused with each
  field and its problem on one line (`field_errors`), not pydantic's text with its links.
- `add_http_option(parser)` and `serve(server, http)`: `--http HOST:PORT` serves the server over
  streamable HTTP at `/mcp` instead of stdio, with the SDK's DNS-rebinding protection on (the
  Host and Origin headers must name the address served; a loopback address also accepts
  `localhost` and `127.0.0.1`/`[::1]` with any port, as the SDK does by itself).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from importlib import metadata
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import CallToolResult, InputRequiredResult
from pydantic import ValidationError

from mcp_servers.field_errors import describe

if TYPE_CHECKING:
    from mcp.server.transport_security import TransportSecuritySettings

PACKAGE = "atrium"
UNKNOWN_VERSION = "0+unknown"

_PROMPTS_AND_RESOURCES = (
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
)
"""The requests whose handlers make the SDK advertise prompts and resources."""

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def package_version() -> str:
    """Atrium's version (the installed package's), reported as `serverInfo.version`."""
    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        return UNKNOWN_VERSION


class _BuiltInServer(MCPServer[Any]):
    """An `MCPServer` that refuses arguments in the author's terms (see the module docstring)."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        """As `MCPServer.call_tool`.

        Raises:
            ToolError: as `MCPServer.call_tool`; for arguments that do not fit the tool's input
                schema, `Error executing tool <name>: invalid arguments (<field>: <problem>)`.
            UnexpectedToolError, MCPError: as `MCPServer.call_tool`.
        """
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            refused = f"Error executing tool {name}: "
            if (
                isinstance(exc, UnexpectedToolError)
                or not isinstance(cause, ValidationError)
                or not str(exc).startswith(refused)
            ):
                raise
            raise ToolError(f"{refused}invalid arguments ({describe(cause)})") from cause


def build_mcp_server(name: str, **kwargs: Any) -> MCPServer[Any]:
    """An `MCPServer` named `name` (other keyword arguments as `MCPServer` takes them) that
    reports Atrium's version, offers tools only (no prompt or resource capability) and refuses
    arguments naming each field and its problem."""
    server = _BuiltInServer(name, version=package_version(), **kwargs)
    offer_tools_only(server)
    return server


def offer_tools_only(server: MCPServer[Any]) -> None:
    """Unregister the SDK's default prompt and resource handlers, so that `server` advertises
    neither capability (and refuses those requests as unknown methods)."""
    handlers: dict[str, Any] = server._lowlevel_server._request_handlers  # pyright: ignore[reportPrivateUsage]
    for method in _PROMPTS_AND_RESOURCES:
        handlers.pop(method, None)


@dataclass(frozen=True, slots=True)
class HttpAddress:
    """Where `--http` serves: `host` (an IP address or a name) and `port`."""

    host: str
    port: int

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/mcp"


def parse_http_address(text: str) -> HttpAddress:
    """`HOST:PORT` (`[::1]:PORT` for an IPv6 address).

    Raises:
        argparse.ArgumentTypeError: not of that form, or the port is not 1-65535.
    """
    host, sep, port = text.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT (e.g. 127.0.0.1:8765), not {text!r}")
    return HttpAddress(host, int(port))


def add_http_option(parser: argparse.ArgumentParser) -> None:
    """`--http HOST:PORT`: serve over streamable HTTP instead of stdio."""
    parser.add_argument(
        "--http",
        metavar="HOST:PORT",
        type=parse_http_address,
        default=None,
        help="serve over streamable HTTP at http://HOST:PORT/mcp instead of stdio "
        "(DNS-rebinding protection on: requests must name HOST:PORT)",
    )


def transport_security(address: HttpAddress) -> TransportSecuritySettings:
    """DNS-rebinding protection for `address`: the Host (and any Origin) header must name it."""
    from mcp.server.transport_security import TransportSecuritySettings

    hosts = [f"{_bracketed(address.host)}:{address.port}"]
    if address.host in LOOPBACK:
        hosts += ["127.0.0.1:*", "localhost:*", "[::1]:*"]
    origins = [f"http://{host}" for host in hosts]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def serve(server: MCPServer[Any], http: HttpAddress | None) -> None:
    """Serve `server` until its client disconnects (stdio) or the process is stopped (HTTP)."""
    if http is None:
        server.run("stdio")
        return
    server.run(
        "streamable-http",
        host=http.host,
        port=http.port,
        transport_security=transport_security(http),
    )
