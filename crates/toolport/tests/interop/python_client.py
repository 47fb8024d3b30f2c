"""Drive a Toolport server with the official Python MCP SDK (PyPI `mcp`).

usage: python_client.py MODE -- COMMAND [ARGS...]     (stdio: spawn the server)
       python_client.py MODE URL                      (Streamable HTTP)

MODE is `auto` (probes server/discover, settles on 2026-07-28) or `legacy`
(initialize handshake, 2025-11-25). Every demo tool is listed and called, the
resources read, the template read, the prompt fetched, progress observed, the
long task cancelled (and seen cancelled on the server), the booking's
elicitation answered. The SDK validates every result against the negotiated
revision's schema; any exception, Python warning or SDK log record at WARNING
or above fails the run. Prints one JSON line of what it saw.
"""

import asyncio
import json
import logging
import sys
import warnings

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import ElicitResult, PromptReference, ResourceTemplateReference

EXPECTED = {
    "auto": "2026-07-28",
    "legacy": "2025-11-25",
}
TOOLS = {"echo", "get_weather", "compute_stats", "long_task", "book_table"}


class Complaints(logging.Handler):
    """Collects every warning-or-worse record the SDK logs."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(f"{record.name}: {record.getMessage()}")


def check(condition: bool, what: str) -> None:
    if not condition:
        raise AssertionError(what)


async def elicitation(_context, params):
    check("Book a table" in params.message, f"unexpected elicitation {params.message!r}")
    return ElicitResult(action="accept", content={"name": "Ada", "guests": 4})


async def jobs(client: Client) -> dict:
    result = await client.read_resource("demo://jobs")
    return json.loads(result.contents[0].text)


async def run(mode: str, target) -> dict:
    seen: dict = {}
    async with Client(target, mode=mode, elicitation_callback=elicitation, read_timeout_seconds=30) as client:
        seen["protocol"] = client.protocol_version
        check(client.protocol_version == EXPECTED[mode], f"negotiated {client.protocol_version}, wanted {EXPECTED[mode]}")

        tools = {t.name: t for t in (await client.list_tools()).tools}
        check(set(tools) == TOOLS, f"tools {sorted(tools)}")
        check(tools["compute_stats"].output_schema is not None, "compute_stats has an outputSchema")

        r = await client.call_tool("echo", {"message": "hello, toolport"})
        check(not r.is_error and r.content[0].text == "hello, toolport", f"echo: {r}")

        r = await client.call_tool("get_weather", {"city": "Paris", "units": "fahrenheit"})
        check(not r.is_error and r.content[0].text.startswith("Paris: ") and "°F" in r.content[0].text, f"weather: {r}")
        r = await client.call_tool("get_weather", {"city": "Paris", "units": "kelvin"})
        check(r.is_error and "units" in r.content[0].text, f"bad units must be an isError result: {r}")

        r = await client.call_tool("compute_stats", {"numbers": [1, 2, 3, 4]})
        check(not r.is_error and r.structured_content == {"count": 4, "sum": 10.0, "mean": 2.5, "min": 1.0, "max": 4.0}, f"stats: {r}")

        progress: list[tuple] = []

        async def on_progress(value, total, message):
            progress.append((value, total, message))

        r = await client.call_tool("long_task", {"steps": 3, "step_ms": 10}, progress_callback=on_progress)
        check(r.content[0].text == "finished 3 steps", f"long_task: {r}")
        check([p[0] for p in progress] == [1, 2, 3] and progress[-1][1] == 3, f"progress {progress}")
        seen["progress"] = len(progress)

        before = await jobs(client)
        cancelled = False
        try:
            await client.call_tool("long_task", {"steps": 600, "step_ms": 100}, read_timeout_seconds=0.5)
        except Exception:  # the SDK raises on its timeout and sends notifications/cancelled
            cancelled = True
        check(cancelled, "the long call should have timed out on the client")
        # The server stops the run when the cancellation arrives; poll a bounded number of times.
        after = before
        for _ in range(100):
            after = await jobs(client)
            if after["cancelled"] == before["cancelled"] + 1:
                break
            await anyio.sleep(0.05)
        check(after["cancelled"] == before["cancelled"] + 1, f"server did not see the cancellation: {before} -> {after}")
        check(after["completed"] == before["completed"], "a cancelled run must not complete")
        seen["cancelled"] = True

        r = await client.call_tool("book_table", {"restaurant": "Chez Toolport"})
        check(not r.is_error and r.content[0].text == "Booked a table for 4 at Chez Toolport under the name Ada.", f"booking: {r}")
        seen["elicitation"] = True

        resources = {str(x.uri) for x in (await client.list_resources()).resources}
        check(resources == {"demo://readme", "demo://jobs"}, f"resources {resources}")
        readme = await client.read_resource("demo://readme")
        check(readme.contents[0].text.startswith("# Toolport demo"), "readme text")
        templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
        check(templates == ["weather://{city}/forecast"], f"templates {templates}")
        forecast = await client.read_resource("weather://Lisbon/forecast")
        check(forecast.contents[0].text.startswith("Lisbon\nday 1:"), f"forecast {forecast}")

        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        check(set(prompts) == {"plan_trip"}, f"prompts {sorted(prompts)}")
        check([a.name for a in prompts["plan_trip"].arguments] == ["city", "days"], "prompt arguments")
        p = await client.get_prompt("plan_trip", {"city": "Rome", "days": "2"})
        check(p.messages[0].content.text == "Plan a 2-day trip to Rome. Check the weather first.", f"prompt {p}")

        c = await client.complete(PromptReference(type="ref/prompt", name="plan_trip"), {"name": "city", "value": "l"})
        check(c.completion.values == ["Lisbon", "London"], f"completion {c.completion}")
        c = await client.complete(ResourceTemplateReference(type="ref/resource", uri="weather://{city}/forecast"), {"name": "city", "value": "t"})
        check(c.completion.values == ["Tokyo"], f"template completion {c.completion}")

        if client.protocol_version < "2026-07-28":
            with warnings.catch_warnings():
                # The SDK marks ping deprecated because 2026-07-28 removed it;
                # it is still part of the handshake era we test here.
                warnings.filterwarnings("ignore", message="ping is removed")
                await client.send_ping()
    return seen


def main() -> None:
    mode, rest = sys.argv[1], sys.argv[2:]
    target = StdioServerParameters(command=rest[1], args=rest[2:]) if rest[0] == "--" else rest[0]
    complaints = Complaints()
    logging.getLogger().addHandler(complaints)
    warnings.simplefilter("error")
    seen = anyio.run(run, mode, target)
    if complaints.records:
        raise SystemExit(f"the SDK complained: {complaints.records}")
    print(json.dumps(seen))


if __name__ == "__main__":
    main()
