"""An independent MCP client (the Python `mcp` package, pinned by .ci/run)
driving `dragnet mcp` over stdio: it lists the agent's tools, walks every
page of the demo shop's orders, gets a cut answer, is refused anything but
retrieval until it reads it, queries the stored rows on a field the answer
did not show, fetches raw text, and then calls on. Prints what it saw as
JSON; the Rust test checks it.

Usage: client.py DRAGNET CONFIG DATABASE_URL MODE
"""

import asyncio
import json
import os
import sys

from mcp import Client, StdioServerParameters


def text_of(result):
    return "".join(getattr(c, "text", "") for c in result.content)


async def main():
    dragnet, config, database, mode = sys.argv[1:5]
    env = dict(os.environ, DATABASE_URL=database, DRAGNET_LOG="warn")
    params = StdioServerParameters(
        command=dragnet,
        args=["mcp", config, "--agent", "analyst", "--stdio"],
        env=env,
    )
    seen = {}
    async with Client(params, mode=mode) as client:
        seen["instructions"] = client.instructions or ""
        listed = await client.list_tools()
        seen["tools"] = {
            t.name: sorted((t.input_schema or {}).get("properties", {}).keys())
            for t in listed.tools
        }
        seen["schema_types"] = sorted({(t.input_schema or {}).get("type") for t in listed.tools})

        progress = []

        async def heard(done, total, message):
            progress.append({"progress": done, "total": total, "message": json.loads(message or "{}")})

        walk = await client.call_tool(
            "listOrders",
            {"status": "cancelled", "per_page": 100, "_all_pages": True, "_fields": ["id", "status"]},
            progress_callback=heard,
        )
        seen["progress"] = progress
        seen["walk_error"] = walk.is_error
        answer = json.loads(text_of(walk))
        seen["walk"] = {
            "complete": answer.get("_pagingComplete"),
            "truncated": answer.get("_truncated"),
            "result_id": answer.get("_resultId"),
            "rows": len(answer.get("data", answer.get("items", []))),
            "first": (answer.get("data") or answer.get("items") or [None])[0],
        }
        rid = answer.get("_resultId")

        refused = await client.call_tool("getOrder", {"order_id": 1})
        seen["refused"] = {"error": refused.is_error, "text": text_of(refused)}

        query = await client.call_tool(
            "queryToolResult",
            {
                "resultId": rid,
                "filter": [{"field": "total", "op": "gt", "value": 900}],
                "fields": ["id", "total"],
                "limit": 5,
            },
        )
        seen["query_error"] = query.is_error
        seen["query"] = json.loads(text_of(query))

        fetched = await client.call_tool("fetchToolResult", {"resultId": rid, "offset": 0, "length": 40})
        seen["fetch"] = json.loads(text_of(fetched))

        after = await client.call_tool("getOrder", {"order_id": 1})
        seen["after"] = {"error": after.is_error, "text": text_of(after)[:200]}

        stranger = await client.call_tool(
            "queryToolResult", {"resultId": "res_" + "0" * 32}
        )
        seen["stranger"] = {"error": stranger.is_error, "text": text_of(stranger)}
    print(json.dumps(seen))


asyncio.run(main())
