"""Drive the gateway with the official Python SDK client (PyPI mcp 2.3.0).

usage: python_client.py MODE URL     MODE: auto (2026-07-28) or legacy (2025-11-25)

Lists the tools, calls upstream tools of the three upstreams under their
prefixed names, watches progress across the hop, answers an upstream's
elicitation. Prints one JSON line of what it saw; any failure raises.
"""

import asyncio
import json
import sys

from mcp import Client
from mcp.types import ElicitResult


def check(condition, what):
    if not condition:
        raise AssertionError(what)


async def elicitation(_context, params):
    return ElicitResult(action="accept", content={"name": "Grace"})


async def run(mode, url):
    seen = {}
    async with Client(url, mode=mode, elicitation_callback=elicitation, read_timeout_seconds=60) as client:
        seen["protocol"] = client.protocol_version
        names = {t.name for t in (await client.list_tools()).tools}
        for needed in ["everything__echo", "files__list_allowed_directories", "py__echo"]:
            check(needed in names, f"{needed} not in {sorted(names)}")
        r = await client.call_tool("everything__echo", {"message": "via the gateway"})
        check(not r.is_error and "via the gateway" in r.content[0].text, f"everything__echo: {r}")
        r = await client.call_tool("py__echo", {"message": "to python"})
        check(not r.is_error and r.content[0].text == "to python", f"py__echo: {r}")
        r = await client.call_tool("files__list_allowed_directories", {})
        check(not r.is_error, f"files: {r}")
        progress = []

        async def on_progress(p, total, message):
            progress.append(p)

        r = await client.call_tool("py__count", {"steps": 3}, progress_callback=on_progress)
        check(not r.is_error and r.content[0].text == "counted 3", f"count: {r}")
        seen["progress"] = progress
        r = await client.call_tool("py__ask_name", {})
        check(not r.is_error and r.content[0].text == "hello Grace", f"ask_name: {r}")
        seen["elicited"] = r.content[0].text
    return seen


if __name__ == "__main__":
    print(json.dumps(asyncio.run(run(sys.argv[1], sys.argv[2]))))
