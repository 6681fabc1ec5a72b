"""One variant of the gateway benchmark's stdio measurement, as a process
of its own (bench/gateway/run.py starts it and times the whole process).

The Python `mcp` client spawns the server over stdio: either the upstream
server itself (`direct`), or `dragnet mcp --stdio` (`gateway`), which
spawns the same upstream as a provider. After `initialize` and one warm-up
call, it times CALLS sequential `tools/call` of `order_status` and prints
one JSON line: the timed seconds, the errors, the warm-up answer (to
compare the two variants' answers), and the CPU the server process it
spawned (the upstream, or dragnet without its own child) spent on them:
the on-CPU nanoseconds of its threads (`/proc/PID/task/*/schedstat`),
read before and after the timed calls, or null where /proc has none.

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


def server_pid():
    """The one process this one started (the stdio server), or None."""
    me = str(os.getpid())
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                # pid (comm) state ppid …: comm may hold spaces, so split after it.
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me:
            found.append(int(entry))
    return found[0] if len(found) == 1 else None


def cpu_ns(pid):
    """On-CPU nanoseconds of `pid`'s live threads, or None."""
    if pid is None:
        return None
    total = 0
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return total


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
        server = server_pid()
        cpu_before = cpu_ns(server)
        start = time.perf_counter()
        for i in range(calls):
            result = await client.call_tool(TOOL, {"order_id": i + 2})
            if result.is_error:
                errors += 1
        elapsed = time.perf_counter() - start
        cpu_after = cpu_ns(server)
        last = answer_of(result)
    server_cpu_s = None
    if cpu_before is not None and cpu_after is not None:
        server_cpu_s = (cpu_after - cpu_before) / 1e9
    print(json.dumps({
        "variant": plan["variant"],
        "calls": calls,
        "calls_s": elapsed,
        "errors": errors,
        "server_cpu_s": server_cpu_s,
        "warm_answer": first,
        "last_answer": last,
    }))


if __name__ == "__main__":
    asyncio.run(main(json.loads(sys.argv[1])))
