"""Sends N `tools/call` requests of the echo tool (2026-07-28, stateless, JSON)
over CONNECTIONS keep-alive connections taken in turn, one at a time, and
checks every answer. Python's standard library only: it drives servers that
run under valgrind in benches/http/instructions.sh.

Usage: python3 keepalive_calls.py PORT N [CONNECTIONS]
"""

import http.client
import json
import sys

port, count = int(sys.argv[1]), int(sys.argv[2])
connections = int(sys.argv[3]) if len(sys.argv) > 3 else 16
meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
}
headers = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "tools/call",
    "Mcp-Name": "echo",
}
pool = [http.client.HTTPConnection("127.0.0.1", port, timeout=60) for _ in range(connections)]
for i in range(count):
    message = f"hello from the mcp peer benchmark {i}"
    params = {"name": "echo", "arguments": {"message": message}, "_meta": meta}
    body = json.dumps({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": params})
    connection = pool[i % connections]
    connection.request("POST", "/mcp", body, headers)
    response = connection.getresponse()
    answer = response.read()
    if response.status != 200 or message.encode() not in answer:
        sys.exit(f"call {i}: HTTP {response.status}: {answer[:200]!r}")
