"""A small MCP server on the official Python SDK (PyPI mcp 2.3.0), which
speaks both eras, for the Toolport client's interop tests.

usage: python_server.py stdio
       python_server.py http PORT        (Streamable HTTP on 127.0.0.1:PORT/mcp)

Tools: echo, count (progress), wait (records whether it was cancelled),
stats (what wait saw), touch (tools list_changed), ask_name (elicitation),
ask_model (sampling).
"""

import sys
from typing import Annotated

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import Elicit, Resolve, Sample
from mcp_types import CreateMessageResult, SamplingMessage, TextContent
from pydantic import BaseModel

app = MCPServer("python-fixture")
STATE = {"started": 0, "cancelled": 0, "completed": 0}


@app.tool()
def echo(message: str) -> str:
    """Returns the message."""
    return message


@app.tool()
async def count(steps: int, ctx: Context) -> str:
    """Reports progress once per step."""
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps)
        await anyio.sleep(0.01)
    return f"counted {steps}"


@app.tool()
async def wait(seconds: float) -> str:
    """Sleeps; a cancelled run is counted in stats."""
    STATE["started"] += 1
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        STATE["cancelled"] += 1
        raise
    STATE["completed"] += 1
    return "waited"


@app.tool()
async def touch(ctx: Context) -> str:
    """Says the tool list changed (to listeners, and to handshake-era sessions)."""
    await ctx.notify_tools_changed()
    try:
        await ctx.session.send_tool_list_changed()
    except Exception:  # 2026-07-28 sessions have no such notification
        pass
    return "touched"


@app.tool()
def stats() -> dict:
    """How runs of wait ended."""
    return dict(STATE)


class Name(BaseModel):
    name: str = "Ada"


def name_question() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


@app.tool()
async def ask_name(who: Annotated[Name, Resolve(name_question)]) -> str:
    """Asks the user for a name."""
    return f"hello {who.name}"


def model_question(prompt: str) -> Sample:
    return Sample([SamplingMessage(role="user", content=TextContent(type="text", text=prompt))], max_tokens=50)


@app.tool()
async def ask_model(prompt: str, answer: Annotated[CreateMessageResult, Resolve(model_question)]) -> str:
    """Asks the client's model."""
    content = answer.content
    text = content.text if isinstance(content, TextContent) else str(content)
    return f"the model said: {text}"


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        app.run()
    else:
        app.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
