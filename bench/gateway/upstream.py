"""The upstream MCP server of the gateway benchmark (bench/gateway/run.py):
one plain tool, written with the Python `mcp` package's high-level server
(`MCPServer`, FastMCP's name in mcp 2.x), over stdio.

`order_status {order_id}` answers a small JSON object (as text, and as
structured content, the way MCPServer answers a dict). It has no paging
arguments, takes no time and touches nothing, so a benchmark calling it
measures the transport and whatever sits in between.

Usage: upstream.py   (stdio)
"""

from mcp.server.mcpserver import MCPServer

server = MCPServer("dragnet-bench-upstream")


@server.tool(description="The status of one order (a small JSON answer).")
def order_status(order_id: int) -> dict:
    return {
        "order_id": order_id,
        "status": ("open", "paid", "shipped", "cancelled")[order_id % 4],
        "total": round(order_id * 1.25, 2),
        "currency": "EUR",
    }


if __name__ == "__main__":
    server.run("stdio")
