"""An MCP server for pith's tests, built with the official Python SDK (`mcp`).

    python3 server.py stdio          # over stdin/stdout
    python3 server.py http PORT      # streamable HTTP on 127.0.0.1:PORT/mcp

It offers ordinary tools and the faults pith must survive: a tool that fails, one whose
server exits mid-call, one that hangs, one that returns a huge result, and one that adds a
tool (and says so with notifications/tools/list_changed).
"""

import asyncio
import base64
import os
import sys

from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ResourceLink

# A 1x1 PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)

server = MCPServer("pith-test", instructions="A server for pith's tests.")

# Something on stderr at start-up: pith must log it, never show it on the terminal.
print("pith-test server starting (this line goes to stderr)", file=sys.stderr, flush=True)


@server.tool()
def echo(text: str) -> str:
    """Echo the text back, prefixed with 'echo: '."""
    return f"echo: {text}"


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def picture() -> Image:
    """Return a tiny PNG image."""
    return Image(data=PNG, format="png")


@server.tool()
def link() -> ResourceLink:
    """Return a link to the notes resource."""
    return ResourceLink(
        type="resource_link", uri="mem://notes", name="notes", mime_type="text/plain"
    )


@server.tool()
def fail(reason: str) -> str:
    """Always fails with the given reason."""
    raise ToolError(f"failed on purpose: {reason}")


@server.tool()
def crash() -> str:
    """The server process exits in the middle of this call."""
    print("crash: exiting now", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool()
async def hang() -> str:
    """Never answers."""
    await asyncio.sleep(3600)
    return "too late"


@server.tool()
def huge(lines: int) -> str:
    """Return this many numbered lines."""
    return "\n".join(f"line {i} " + "x" * 60 for i in range(lines))


@server.tool()
async def pid() -> str:
    """The server's process id (to tell a restarted server from the first)."""
    return str(os.getpid())


async def extra(word: str) -> str:
    """A tool added at run time."""
    return f"extra: {word}"


@server.tool()
async def grow(ctx: Context) -> str:
    """Add the tool `extra` and tell the client its tools changed."""
    server.add_tool(extra)
    await ctx.request_context.session.send_tool_list_changed()
    return "added extra"


@server.prompt()
def review(pr: str, focus: str = "everything") -> str:
    """Ask for a review of a pull request."""
    return f"Please review pull request {pr}, looking at {focus}."


@server.resource("mem://notes", mime_type="text/plain")
def notes() -> str:
    """Notes kept by the server."""
    return "The notes say: remember the milk."


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
