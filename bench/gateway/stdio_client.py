"""One variant of the gateway benchmark's stdio measurement, as a process
of its own (bench/gateway/run.py starts it and times the whole process).

The Python `mcp` client spawns the server over stdio: either the upstream
server itself (`direct`), or `dragnet mcp --stdio` (`gateway`), which
spawns the same upstream as a provider. After `initialize` and one warm-up
call, it times CALLS sequential `tools/call` of `order_status` and prints
one JSON line: the timed seconds, the errors, and the warm-up answer (to
compare the two variants' answers).

Usage: stdio_client.py PLAN_JSON
PLAN_JSON: {"variant": "direct"|"gateway", "calls": N, "command": …,
            "args": […], "env": {…}}
"""

import asyncio
import json
import os
import sys
import time

from mcp import Client, StdioServerParameters

TOOL = "order_status"


def answer_of(result):
    """The answer as the protocol writes it (content and structured content)."""
    return {
        "is_error": bool(result.is_error),
        "content": [
            c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in result.content
        ],
        "structured": getattr(result, "structured_content", None),
    }


async def main(plan):
    env = dict(os.environ, **plan.get("env", {}))
    params = StdioServerParameters(command=plan["command"], args=plan["args"], env=env)
    calls = int(plan["calls"])
    errors = 0
    async with Client(params, mode="legacy", cache=None) as client:
        warm = await client.call_tool(TOOL, {"order_id": 1})
        first = answer_of(warm)
        start = time.perf_counter()
        for i in range(calls):
            result = await client.call_tool(TOOL, {"order_id": i + 2})
            if result.is_error:
                errors += 1
        elapsed = time.perf_counter() - start
        last = answer_of(result)
    print(json.dumps({
        "variant": plan["variant"],
        "calls": calls,
        "calls_s": elapsed,
        "errors": errors,
        "warm_answer": first,
        "last_answer": last,
    }))


if __name__ == "__main__":
    asyncio.run(main(json.loads(sys.argv[1])))
