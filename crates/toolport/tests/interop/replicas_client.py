"""Drive replicas behind a load balancer with the official Python MCP SDK.

usage: replicas_client.py MODE URL CALLS

MODE is `auto` (2026-07-28, every request stands alone) or `legacy` (an
initialize handshake, then one session: every request names it, whichever
replica the load balancer picks). Makes CALLS `echo` calls, then a call with
progress and a `book_table` whose elicitation the client answers (in the
handshake era the answer is a POST that may reach another replica than the
one running the call; in 2026-07-28 the retry carries the sealed
requestState to whichever replica). Any exception or SDK record at WARNING
or above fails the run. Prints one JSON line: what it did and saw.
"""

import json
import logging
import sys
import warnings

import anyio
from mcp import Client
from mcp.types import ElicitResult

EXPECTED = {"auto": "2026-07-28", "legacy": "2025-11-25"}


class Complaints(logging.Handler):
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


async def run(mode: str, url: str, calls: int) -> dict:
    seen = {"calls": 0, "errors": 0}
    async with Client(url, mode=mode, elicitation_callback=elicitation, read_timeout_seconds=30) as client:
        seen["protocol"] = client.protocol_version
        check(client.protocol_version == EXPECTED[mode], f"negotiated {client.protocol_version}")
        for i in range(calls):
            r = await client.call_tool("echo", {"message": f"call {i}"})
            seen["calls"] += 1
            if r.is_error or r.content[0].text != f"call {i}":
                seen["errors"] += 1
        progress: list = []

        async def on_progress(value, total, message):
            progress.append(value)

        r = await client.call_tool("long_task", {"steps": 3, "step_ms": 10}, progress_callback=on_progress)
        check(r.content[0].text == "finished 3 steps" and progress == [1, 2, 3], f"long_task: {r} {progress}")
        for _ in range(3):
            r = await client.call_tool("book_table", {"restaurant": "Chez Toolport"})
            check(
                not r.is_error and r.content[0].text == "Booked a table for 4 at Chez Toolport under the name Ada.",
                f"booking: {r}",
            )
        seen["booked"] = 3
    return seen


def main() -> None:
    mode, url, calls = sys.argv[1], sys.argv[2], int(sys.argv[3])
    complaints = Complaints()
    logging.getLogger().addHandler(complaints)
    warnings.simplefilter("error")
    seen = anyio.run(run, mode, url, calls)
    if complaints.records:
        raise SystemExit(f"the SDK complained: {complaints.records}")
    print(json.dumps(seen))


if __name__ == "__main__":
    main()
