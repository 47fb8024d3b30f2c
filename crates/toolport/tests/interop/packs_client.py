"""Drive `toolport serve` with its packs using the official Python MCP SDK.

usage: python packs_client.py MODE URL ROOT_PATH

MODE is `auto` (settles on 2026-07-28) or `legacy` (2025-11-25). ROOT_PATH is
the server's writable root; the client offers it (and only its `work`
subdirectory's sibling `open`) as its roots, so the server narrows access to
them. Every tool of both packs is called, files and tables are read as
resources, the prompt is fetched, and escapes and writes are seen refused.
Any exception, Python warning or SDK log record at WARNING or above fails the
run. Prints one JSON line of what it saw.
"""

import json
import logging
import pathlib
import sys
import warnings

import anyio
from mcp import Client
from mcp.types import ListRootsResult, Root

FS_TOOLS = {
    "list_roots", "read_file", "read_media", "list_directory", "directory_tree", "search_files", "get_file_info",
    "write_file", "edit_file", "create_directory", "move_file",
}
SQL_TOOLS = {"query", "list_tables", "describe_table"}


class Complaints(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(f"{record.name}: {record.getMessage()}")


def check(condition: bool, what: str) -> None:
    if not condition:
        raise AssertionError(what)


def text(result) -> str:
    return result.content[0].text


async def run(mode: str, url: str, root: pathlib.Path) -> dict:
    seen: dict = {"tools": []}
    open_dir = root / "open"

    async def roots(_context):
        # The client allows only ROOT/open: the server must narrow to it.
        seen["roots_asked"] = seen.get("roots_asked", 0) + 1
        return ListRootsResult(roots=[Root(uri=open_dir.as_uri(), name="open")])

    async with Client(url, mode=mode, list_roots_callback=roots, read_timeout_seconds=30) as client:
        seen["protocol"] = client.protocol_version

        async def call(name: str, args: dict, error: bool = False):
            result = await client.call_tool(name, args)
            check(bool(result.is_error) == error, f"{name} {args}: is_error={result.is_error}: {result.content}")
            seen["tools"].append(name)
            return result

        tools = {t.name for t in (await client.list_tools()).tools}
        check(tools == FS_TOOLS | SQL_TOOLS, f"tools {sorted(tools)}")

        r = await call("list_roots", {})
        check(r.structured_content["roots"][0]["writable"] is True, f"list_roots {r.structured_content}")
        r = await call("read_file", {"path": "open/hello.txt"})
        check(text(r) == "hello from the open directory\n", f"read_file {r}")
        etag = r.structured_content["etag"]
        r = await call("read_file", {"path": "open/hello.txt", "offset": 6, "length": 4, "if_none_match": "\"other\""})
        check(text(r) == "from" and r.structured_content["truncated"] is True, f"range {r.structured_content}")
        r = await call("read_file", {"path": "open/hello.txt", "if_none_match": etag})
        check(r.structured_content["notModified"] is True, f"if_none_match {r.structured_content}")
        r = await call("read_media", {"path": "open/pixel.png"})
        check(r.content[0].type == "image" and r.content[0].mime_type == "image/png", f"read_media {r.content}")
        r = await call("list_directory", {"path": "open"})
        names = {e["name"] for e in r.structured_content["entries"]}
        check({"hello.txt", "pixel.png"} <= names, f"list_directory {names}")
        r = await call("directory_tree", {"path": "open", "depth": 2})
        check(r.structured_content["truncated"] is False, f"directory_tree {r.structured_content}")
        r = await call("search_files", {"pattern": "*.txt", "path": "open"})
        check(r.structured_content["matches"] == ["open/hello.txt"], f"search_files {r.structured_content}")
        r = await call("get_file_info", {"path": "open/hello.txt"})
        check(r.structured_content["kind"] == "file" and r.structured_content["etag"] == etag, "get_file_info")

        r = await call("create_directory", {"path": "open/made"})
        check(r.structured_content["created"] is True, "create_directory")
        r = await call("write_file", {"path": "open/made/note.md", "content": "alpha\nbeta\n"})
        check(r.structured_content["created"] is True, "write_file")
        r = await call("edit_file", {"path": "open/made/note.md", "edits": [{"old_text": "beta", "new_text": "gamma"}], "dry_run": True})
        check("+gamma" in r.structured_content["diff"] and r.structured_content["applied"] is False, "edit_file dry run")
        r = await call("edit_file", {"path": "open/made/note.md", "edits": [{"old_text": "beta", "new_text": "gamma"}]})
        check(r.structured_content["applied"] is True, "edit_file")
        r = await call("move_file", {"source": "open/made/note.md", "destination": "open/note.md"})
        check((open_dir / "note.md").read_text() == "alpha\ngamma\n", "move_file")

        # Refusals: out of the configured root, and out of the client's roots.
        r = await call("read_file", {"path": "../../etc/passwd"}, error=True)
        check("`..`" in text(r), f"traversal {text(r)}")
        r = await call("read_file", {"path": "open/escape"}, error=True)
        check("leads outside its root" in text(r), f"symlink escape {text(r)}")
        r = await call("read_file", {"path": "closed/secret.txt"}, error=True)
        check("outside the roots this client allows" in text(r), f"client roots {text(r)}")
        seen["roots_narrowed"] = True

        r = await call("list_tables", {})
        tables = [t["name"] for t in r.structured_content["tables"]]
        check("customers" in tables and "orders" in tables, f"list_tables {tables}")
        r = await call("describe_table", {"table": "products"})
        check(r.structured_content["columns"][0]["primaryKey"] is True, "describe_table")
        r = await call("query", {"sql": "SELECT name, country FROM customers WHERE id = 1"})
        check(r.structured_content["rows"] == [["Ada Lovelace", "GB"]], f"query {r.structured_content}")
        r = await call("query", {"sql": "COMMIT; DROP TABLE customers"}, error=True)
        check("2 statements" in text(r), f"stacked {text(r)}")
        r = await call("query", {"sql": "DELETE FROM customers"}, error=True)
        check("not a read-only query" in text(r), f"delete {text(r)}")

        resources = {str(x.uri) for x in (await client.list_resources()).resources}
        check("sql://demo/tables/customers" in resources, f"resources {sorted(resources)}")
        table = await client.read_resource("sql://demo/tables/products")
        check(json.loads(table.contents[0].text)["table"]["name"] == "products", "table resource")
        templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
        check(f"{root.as_uri()}/{{+path}}" in templates, f"templates {templates}")
        note = await client.read_resource(f"{open_dir.as_uri()}/note.md")
        check(note.contents[0].text == "alpha\ngamma\n", f"file resource {note}")
        prompt = await client.get_prompt("query-with-explain", {"query": "SELECT * FROM orders"})
        check("EXPLAIN QUERY PLAN SELECT * FROM orders" in prompt.messages[0].content.text, "prompt")
    seen["tools"] = sorted(set(seen["tools"]))
    return seen


def main() -> None:
    mode, url, root = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
    complaints = Complaints()
    logging.getLogger().addHandler(complaints)
    warnings.simplefilter("error")
    seen = anyio.run(run, mode, url, root)
    if complaints.records:
        raise SystemExit(f"the SDK complained: {complaints.records}")
    print(json.dumps(seen))


if __name__ == "__main__":
    main()
