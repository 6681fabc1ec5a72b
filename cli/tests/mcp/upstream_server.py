"""An upstream MCP server for the gateway's tests, written with the Python
SDK's low-level server so its tool list can come in pages: two tools per
`tools/list` page, with `nextCursor`, the tool the tests bind most on the
last page. `list_tickets` pages by `page` and `per_page` (at most 50 a
page; 230 tickets) and reports progress for each page; `ticket_note`
answers prose; `close_ticket` always answers a tool error; `media`
answers every kind of content block (text, audio, embedded text and blob
resources, with annotations and `_meta`) and structured content; `crash` exits
the process (to see it restarted). Every call's arguments are appended to RECORD, one JSON line
each (with the `X-Upstream-Key` header over HTTP), so a test can see
exactly what reached the upstream.

Usage: upstream_server.py RECORD            (stdio)
       upstream_server.py RECORD --http PORT (streamable HTTP at /mcp)
"""

import json
import os
import sys

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server

RECORD = sys.argv[1]
TICKETS = [{"id": i, "status": ["open", "closed"][i % 2], "subject": f"ticket {i}"} for i in range(1, 231)]
MOST = 50
PAGE_OF_TOOLS = 2

TOOLS = [
    # First, on the page a client that reads one page sees (the Inspector).
    types.Tool(
        name="media",
        description="Answers a recording of a ticket call, in every kind of content block.",
        input_schema={"type": "object", "properties": {"id": {"type": "integer"}}},
    ),
    types.Tool(name="filler_a", description="Does nothing.", input_schema={"type": "object", "properties": {}}),
    types.Tool(name="filler_b", description="Does nothing.", input_schema={"type": "object", "properties": {}}),
    types.Tool(
        name="ticket_note",
        description="A note about a ticket, in prose.",
        input_schema={"type": "object", "properties": {"id": {"type": "integer"}}},
    ),
    types.Tool(name="filler_c", description="Does nothing.", input_schema={"type": "object", "properties": {}}),
    types.Tool(name="crash", description="Exits the server at once.", input_schema={"type": "object", "properties": {}}),
    types.Tool(
        name="close_ticket",
        description="Closes a ticket; always refuses (a tool error).",
        input_schema={"type": "object", "properties": {"id": {"type": "integer"}}},
    ),
    types.Tool(
        name="list_tickets",
        description="Lists support tickets, a page at a time.",
        input_schema={
            "type": "object",
            "properties": {
                "page": {"type": "integer", "minimum": 1, "default": 1},
                "per_page": {"type": "integer", "minimum": 1, "maximum": MOST, "default": 20},
                "status": {"type": "string"},
            },
        },
    ),
]


def record(ctx, name, arguments):
    request = getattr(ctx, "request", None)
    headers = getattr(request, "headers", None)
    key = headers.get("x-upstream-key") if headers is not None else None
    with open(RECORD, "a", encoding="utf-8") as f:
        f.write(json.dumps({
            "tool": name,
            "arguments": arguments,
            "key": key,
            # What the child was given: its provider's variable, and (to
            # see that nothing else of its starter's environment reached
            # it) a test secret the starter holds.
            "mode": os.environ.get("TICKETS_MODE"),
            "leak": os.environ.get("DRAGNET_TEST_SECRET"),
        }) + "\n")


async def list_tools(ctx, params):
    start = int(params.cursor) if params is not None and params.cursor else 0
    end = start + PAGE_OF_TOOLS
    return types.ListToolsResult(
        tools=TOOLS[start:end], next_cursor=str(end) if end < len(TOOLS) else None
    )


def text(value):
    return types.CallToolResult(content=[types.TextContent(type="text", text=value)])


def media(ticket):
    """Every kind of block, as the protocol writes it."""
    return {
        "content": [
            {"type": "text", "text": f"The call about ticket {ticket}:", "_meta": {"dev.example/part": 1}},
            {
                "type": "audio",
                "data": "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=",
                "mimeType": "audio/wav",
                "annotations": {"audience": ["user"], "priority": 0.4},
            },
            {
                "type": "resource",
                "resource": {"uri": f"tickets://{ticket}/transcript", "mimeType": "text/plain", "text": "Hello, my order is late."},
                "annotations": {"audience": ["assistant"]},
            },
            {
                "type": "resource",
                "resource": {"uri": f"tickets://{ticket}/attachment", "mimeType": "application/pdf", "blob": "JVBERi0xLjQK"},
            },
        ],
        "structuredContent": {"ticket": ticket, "minutes": 4},
    }


async def call_tool(ctx, params):
    args = params.arguments or {}
    record(ctx, params.name, args)
    if params.name == "list_tickets":
        page = int(args.get("page", 1))
        per_page = min(int(args.get("per_page", 20)), MOST)
        rows = [t for t in TICKETS if args.get("status") in (None, t["status"])]
        await ctx.session.report_progress(page, None, f"read page {page}")
        chunk = rows[(page - 1) * per_page : page * per_page]
        return text(json.dumps({"tickets": chunk, "total": len(rows)}))
    if params.name == "crash":
        os._exit(3)
    if params.name == "close_ticket":
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=f"ticket {args.get('id')} cannot be closed: it has open tasks")],
            is_error=True,
        )
    if params.name == "media":
        return types.CallToolResult.model_validate(media(args.get("id", 1)))
    if params.name == "ticket_note":
        return text(f"Ticket {args.get('id')} was opened by a customer and is being looked at.")
    return text("{}")


server = Server("dragnet-test-upstream", on_list_tools=list_tools, on_call_tool=call_tool)


async def stdio():
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def http(port):
    import uvicorn

    app = server.streamable_http_app(streamable_http_path="/mcp")
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[2] == "--http":
        http(int(sys.argv[3]))
    else:
        anyio.run(stdio)
