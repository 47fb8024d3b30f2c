"""An upstream on the official Python SDK (PyPI mcp 2.3.0) over Streamable
HTTP, for the gateway's interop tests. It speaks both eras.

usage: python_upstream.py PORT      (serves 127.0.0.1:PORT/mcp)

Tools: echo, count (progress), wait (counts cancelled runs), stats, ask_name
(elicitation).
"""

import sys
from typing import Annotated

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import Elicit, Resolve
from pydantic import BaseModel

app = MCPServer("python-upstream")
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


if __name__ == "__main__":
    app.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
