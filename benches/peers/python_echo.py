"""The official Python SDK (PyPI `mcp`) serving the benchmark's echo tool.

usage: python_echo.py PORT      (stateless Streamable HTTP, JSON answers, 127.0.0.1)
"""
import sys

from mcp.server.mcpserver import MCPServer

app = MCPServer("python-echo", log_level="WARNING")


@app.tool(structured_output=False)
def echo(message: str) -> str:
    """Returns the message."""
    return message


if __name__ == "__main__":
    app.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]), stateless_http=True, json_response=True)
