"""An MCP server on the official Python SDK's low-level API (PyPI mcp 2.3.0)
that declares only `tools`, like rmcp's echo example: it answers
resources/list and prompts/list with -32601.

usage: tools_only_server.py        (stdio)
"""

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server


async def list_tools(ctx, params):
    return types.ListToolsResult(
        tools=[
            types.Tool(
                name="echo",
                description="Returns the message.",
                input_schema={"type": "object", "properties": {"message": {"type": "string"}}},
            )
        ]
    )


async def call_tool(ctx, params):
    message = (params.arguments or {}).get("message", "")
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)])


server = Server("tools-only", version="1", on_list_tools=list_tools, on_call_tool=call_tool)


async def main():
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


anyio.run(main)
