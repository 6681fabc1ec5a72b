"""An upstream MCP server for the gateway's secret and cache tests, written
with the Python SDK's low-level server:
- `get_env` answers the server's whole environment, as JSON text and as
  `structuredContent` (`{"env": {...}}`);
- `read_file {path}` answers a file's content as prose (a plain tool: it
  does not page), or `{"path", "content"}` as `structuredContent` when
  `structured` is true;
- `list_lines {path, page, per_page}` pages through a file's lines (a tool
  the gateway walks).
Every call is appended to RECORD, one JSON line each, so a test can count
what reached the upstream. At start it prints the key it was given to
stderr, as a careless server would.

Usage: env_server.py RECORD   (stdio)
"""

import json
import os
import sys

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server

RECORD = sys.argv[1]
MOST = 50

TOOLS = [
    types.Tool(
        name="get_env",
        description="Answers this server's environment.",
        input_schema={"type": "object", "properties": {}},
    ),
    types.Tool(
        name="read_file",
        description="Reads a text file.",
        input_schema={
            "type": "object",
            "properties": {"path": {"type": "string"}, "structured": {"type": "boolean"}},
            "required": ["path"],
        },
    ),
    types.Tool(
        name="list_lines",
        description="Lists a text file's lines, a page at a time.",
        input_schema={
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "page": {"type": "integer", "minimum": 1, "default": 1},
                "per_page": {"type": "integer", "minimum": 1, "maximum": MOST, "default": 10},
            },
            "required": ["path"],
        },
    ),
]


def record(name, arguments):
    with open(RECORD, "a", encoding="utf-8") as f:
        f.write(json.dumps({"tool": name, "arguments": arguments}) + "\n")


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=TOOLS)


def text(value, structured=None):
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=value)], structured_content=structured
    )


async def call_tool(ctx, params):
    args = params.arguments or {}
    record(params.name, args)
    if params.name == "get_env":
        env = dict(os.environ)
        return text(json.dumps({"env": env}), {"env": env})
    if params.name == "read_file":
        with open(args["path"], encoding="utf-8") as f:
            content = f.read()
        if args.get("structured"):
            return text(content, {"path": args["path"], "content": content})
        return text(content)
    if params.name == "list_lines":
        with open(args["path"], encoding="utf-8") as f:
            lines = [line.rstrip("\n") for line in f]
        page = int(args.get("page", 1))
        per_page = min(int(args.get("per_page", 10)), MOST)
        rows = [{"n": i + 1, "line": line} for i, line in enumerate(lines)]
        chunk = rows[(page - 1) * per_page : page * per_page]
        return text(json.dumps({"lines": chunk, "total": len(rows)}))
    return text("{}")


server = Server("dragnet-test-env", on_list_tools=list_tools, on_call_tool=call_tool)


async def main():
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    # What a chatty server logs: the key it was given, on stderr.
    key, mode = os.environ.get("FILES_API_KEY"), os.environ.get("FILES_MODE")
    print(f"env server starting: key {key}, mode {mode}", file=sys.stderr, flush=True)
    anyio.run(main)
