"""An independent MCP client (the Python `mcp` package) that follows a plan:
connect to a gateway over streamable HTTP (with the given headers) or
stdio, then do each step in order, in one connection, and print what each
step saw as JSON. The Rust tests write the plans and check the answers.

Usage: plan_client.py PLAN_JSON

PLAN_JSON: {"url": "http://…/mcp", "headers": {…}}  or
           {"stdio": {"command": …, "args": […], "env": {…}}}
           plus "mode" ("legacy" | "2026-07-28") and "steps": a list of
           {"list": true} | {"call": NAME, "args": {…}, "meta": {…}?} |
           {"sleep": SECONDS} | {"notifications": true} (the server
           notifications' methods heard so far) |
           {"write": PATH, "text": TEXT} (a file rewritten between calls) |
           {"read": URI} or {"read_link_of": STEP} (resources/read of a URI,
           or of the dragnet:// resource_link in an earlier call's content;
           what was read, or the error);
           a call's "args_from": {ARG: [STEP, KEY]} takes ARG from the JSON
           answer of an earlier step (e.g. its `_resultId`)
"""

import asyncio
import json
import os
import sys

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client


def text_of(result):
    return "".join(getattr(c, "text", "") for c in result.content)


def block_of(content):
    dump = getattr(content, "model_dump", None)
    if dump is None:
        return content
    return dump(mode="json", by_alias=True, exclude_none=True)


def parsed(text):
    try:
        return json.loads(text)
    except ValueError:
        return None


async def run(plan):
    if "url" in plan:
        http = httpx2.AsyncClient(headers=plan.get("headers", {}), timeout=60)
        server = streamable_http_client(plan["url"], http_client=http)
    else:
        s = plan["stdio"]
        server = StdioServerParameters(
            command=s["command"], args=s["args"], env=dict(os.environ, **s.get("env", {}))
        )
    seen = []
    heard_notes = []

    async def on_message(message):
        # Server notifications, by method (tools/list_changed, …).
        root = getattr(message, "root", message)
        method = getattr(root, "method", None)
        if method:
            heard_notes.append(method)

    async with Client(server, mode=plan["mode"], cache=None, message_handler=on_message) as client:
        for step in plan["steps"]:
            if step.get("notifications"):
                await asyncio.sleep(0.2)
                seen.append({"notifications": list(heard_notes)})
                continue
            if "write" in step:
                with open(step["write"], "w", encoding="utf-8") as f:
                    f.write(step["text"])
                seen.append({})
                continue
            if "sleep" in step:
                await asyncio.sleep(step["sleep"])
                seen.append({})
                continue
            if "read" in step or "read_link_of" in step:
                uri = step.get("read") or next(
                    (
                        b.get("uri")
                        for b in seen[step["read_link_of"]].get("content", [])
                        if b.get("type") == "resource_link"
                        and str(b.get("uri", "")).startswith("dragnet://")
                    ),
                    None,
                )
                try:
                    read = await client.read_resource(uri)
                    seen.append({"uri": uri, "contents": [block_of(c) for c in read.contents]})
                except Exception as e:  # the server's refusal, as the client reports it
                    seen.append({"uri": uri, "read_error": str(e)})
                continue
            if step.get("list"):
                listed = await client.list_tools()
                seen.append(
                    {
                        "instructions": client.instructions or "",
                        "tools": {
                            t.name: sorted((t.input_schema or {}).get("properties", {}).keys())
                            for t in listed.tools
                        },
                        "next_cursor": listed.next_cursor,
                    }
                )
                continue
            progress = []

            async def heard(done, total, message, progress=progress):
                progress.append({"progress": done, "total": total, "message": parsed(message or "")})

            args = dict(step.get("args", {}))
            for name, (at, key) in step.get("args_from", {}).items():
                args[name] = (seen[at].get("json") or {}).get(key)
            result = await client.call_tool(
                step["call"], args, progress_callback=heard, meta=step.get("meta")
            )
            text = text_of(result)
            seen.append(
                {
                    "error": bool(result.is_error),
                    "text": text,
                    "json": parsed(text),
                    "progress": progress,
                    # Every content block as the protocol writes it, and
                    # the structured content, as they reached the client.
                    "content": [block_of(c) for c in result.content],
                    "structured": getattr(result, "structured_content", None),
                }
            )
    return seen


if __name__ == "__main__":
    print(json.dumps(asyncio.run(run(json.loads(sys.argv[1])))))
