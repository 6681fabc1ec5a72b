"""An older MCP client (the Python `mcp` package 1.9.4, protocol
2025-03-26) driving `dragnet mcp` over stdio: it initialises, lists the
agent's tools and walks every page of one. Prints what it saw as JSON.

Usage: client_v1.py DRAGNET CONFIG DATABASE_URL
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main():
    dragnet, config, database = sys.argv[1:4]
    env = dict(os.environ, DATABASE_URL=database, DRAGNET_LOG="warn")
    params = StdioServerParameters(
        command=dragnet, args=["mcp", config, "--agent", "analyst", "--stdio"], env=env
    )
    seen = {}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            seen["protocol"] = init.protocolVersion
            listed = await session.list_tools()
            seen["tools"] = sorted(t.name for t in listed.tools)
            walk = await session.call_tool(
                "listOrders", {"status": "cancelled", "_all_pages": True, "_fields": ["id"]}
            )
            seen["error"] = walk.isError
            seen["answer"] = json.loads("".join(c.text for c in walk.content))
    print(json.dumps(seen))


asyncio.run(main())
