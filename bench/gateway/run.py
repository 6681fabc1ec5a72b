"""The agent gateway's own cost (`dragnet mcp`), measured with the Python
`mcp` client (2.3.0, from `bash .ci/python.sh`) over stdio and with raw
JSON-RPC over HTTP (or that client again). A benchmark, not a test: it
asserts nothing about time.

(A) stdio overhead. CALLS sequential `tools/call` of one plain tool
    (`order_status` of bench/gateway/upstream.py, bound without looping,
    so the gateway passes it through), once straight to the upstream server
    (the client spawns it over stdio) and once through `dragnet mcp --stdio`
    (the client spawns dragnet, dragnet spawns the same upstream). Each run
    is a process of its own (bench/gateway/stdio_client.py); only the calls
    after `initialize` and one warm-up call are timed, and the whole
    process's wall time (start-up included) is reported beside it, and so
    is the CPU a call of the process the client started (the upstream
    itself, or dragnet without the upstream it runs: its threads' on-CPU
    time from /proc around the timed calls): what the gateway spends,
    apart from the waits for the other two processes. The variants
    alternate, ROUNDS times each; medians are reported. With --floor, a
    third variant puts bench/src/bin/stdio_floor.rs between the client
    and the same upstream: a hop that parses each message, gives a
    request an id of its own, and writes it on (tokio and serde_json, no
    rmcp): what any gateway that reads every message costs at least.

(B) streamable HTTP with tokens. `dragnet mcp --http 127.0.0.1:0` over the
    demo shop (`base_url: embedded`) and a SQLite store in a temporary
    directory (or --database-url). One `_all_pages` walk of `listOrders`
    fills the cache; then CALLERS concurrent callers, each with its own
    token (all under organisation credentials, so they share the cache
    entry), each make the same walk PER_CALLER times, sequentially, once
    every caller is ready. Every answer must be a labelled cache hit
    (`_cache.hit`), complete (`_pagingComplete`), not cut, and as long as
    the first walk; each one that is not counts as a problem. The gateway's
    CPU seconds while the callers ran are read from /proc (its cost a call),
    and so are this process's (the client's). With --floor-http (raw
    stateless callers), the same callers then call
    bench/src/bin/http_floor.rs, which answers every call with the walk's
    answer as the gateway gave it (under the request's id) and does
    nothing else: the latencies these callers see of a server that costs
    next to nothing, so what is theirs shows apart from the gateway's.

    The callers (--http-client):
    - raw (the default): raw JSON-RPC over HTTP, no `mcp` package on the
      hot path. Each caller is an OS thread with its own keep-alive
      `http.client.HTTPConnection`. In the default stateless mode each call
      is one POST standing alone (protocol 2026-07-28: no `initialize`;
      the `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers and
      the `io.modelcontextprotocol/protocolVersion` and
      `io.modelcontextprotocol/clientCapabilities` keys of `_meta`, as
      rmcp's server checks them); with --http-mode legacy each caller
      first makes `initialize` and `notifications/initialized` and sends
      its `Mcp-Session-Id` on every call (and DELETEs it at the end). An
      answer is read as JSON or as server-sent events (its `data:` lines).
      Calls of 40 ms or more are counted: the delayed-ACK stall an answer
      sent in two writes meets while the gateway's socket has Nagle on.
    - wrk: wrk (from Debian's packages) with one keep-alive connection per
      caller on 2 threads, stateless POSTs as above, the callers' tokens
      taken in turn, for --wrk-seconds (5) rather than PER_CALLER calls.
      Its Lua script checks every answer as above (a hit, complete, not
      cut, the first walk's row count, counted by its `status` fields) and
      reports wrk's own latency percentiles. A C load generator spends a
      fifth of what the Python threads spend a call, so the gateway gets
      the cores the way a load from other machines would leave them.
    - mcp: the Python `mcp` client (2.3.0), each caller an asyncio task in
      this process with its own session (--http-mode legacy, the default
      for it, or 2026-07-28 as `stateless`). That client costs more CPU
      than the gateway (on 2 CPUs it is the limit: its latencies are
      mostly its own), so it measures the client more than the gateway.

Output: a table on stderr, and one JSON object as the last line of stdout:
{"stdio": {"calls", "direct_s", "gateway_s", "ratio", "direct_process_s",
"gateway_process_s", "gateway_server_cpu_ms_per_call", "floor_ratio", …}, "http": {"callers",
"calls", "per_s", "p50_ms", "p99_ms", "max_ms", "cached", "client", "mode", "floor", …},
"host": {"cpus", "load1_start", "load1_end"}} (the keys after the first ones in each part are extras: per-call
means, errors, whether the answers matched, CPU seconds, the load).

Usage: PY=/tmp/dragnet-ci-venv/bin/python
       $PY bench/gateway/run.py BINARY [--calls 1000] [--callers 100]
           [--per-caller 10] [--rounds 3] [--database-url URL]
           [--http-client raw|wrk|mcp] [--http-mode stateless|legacy]
           [--floor target/release/stdio_floor] [--floor-http target/release/http_floor]
           [--wrk-seconds 5]
           [--only stdio|http]
(a part not run is null in the JSON)
"""

import argparse
import asyncio
import http.client
import json
import logging
import os
import resource
import secrets
import shutil
import signal
import statistics
import string
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SHOP_OPENAPI = ROOT / "shop" / "openapi.yaml"

# The walk the HTTP callers repeat: every page of property 1's cancelled
# orders, a few fields of each.
WALK_TOOL = "listOrders"
WALK_ARGS = {
    "status": "cancelled",
    "property_id": 1,
    "per_page": 10,
    "_all_pages": True,
    "_fields": ["id", "status", "total"],
}


def log(*parts):
    print(*parts, file=sys.stderr, flush=True)


def clean_env(**extra):
    """This environment without dragnet's settings (as the tests' `command`)."""
    drop = {"DATABASE_URL", "RUST_LOG", "NO_COLOR"}
    env = {k: v for k, v in os.environ.items() if not k.startswith("DRAGNET_") and k not in drop}
    env.update(extra)
    return env


def fill(template, path, **values):
    text = string.Template((HERE / template).read_text(encoding="utf-8")).substitute(
        {k: json.dumps(str(v)) for k, v in values.items()}
    )
    path.write_text(text, encoding="utf-8")
    return path


def stop(proc, grace=5.0):
    """Ends `proc` and its process group (it was started in a session of its own)."""
    if proc is None or proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def cpu_seconds(pid):
    """User + system CPU seconds of process `pid` so far (Linux), else None."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def median(xs):
    return statistics.median(xs) if xs else None


def percentile(sorted_xs, q):
    """Nearest-rank percentile of sorted values."""
    if not sorted_xs:
        return None
    rank = max(1, min(len(sorted_xs), int(-(-q * len(sorted_xs) // 100))))
    return sorted_xs[rank - 1]


def latency_ms(sorted_xs):
    """min, p50, p90, p99 and max of sorted seconds, in ms (None when empty)."""
    def ms(x):
        return None if x is None else round(x * 1000, 3)

    return {
        "min_ms": ms(sorted_xs[0] if sorted_xs else None),
        "p50_ms": ms(percentile(sorted_xs, 50)),
        "p90_ms": ms(percentile(sorted_xs, 90)),
        "p99_ms": ms(percentile(sorted_xs, 99)),
        "max_ms": ms(sorted_xs[-1] if sorted_xs else None),
    }


# ---------------------------------------------------------------- (A) stdio


def stdio_run(plan, timeout, cwd):
    """Runs one variant as a process; (its report, its wall seconds)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "stdio_client.py"), json.dumps(plan)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(),
        cwd=cwd,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop(proc)
        raise RuntimeError(f"the {plan['variant']} run took more than {timeout}s")
    finally:
        stop(proc)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"the {plan['variant']} run failed ({proc.returncode}):\n{err[-4000:]}")
    return json.loads(out.strip().splitlines()[-1]), wall


def bench_stdio(binary, tmp, calls, rounds, database_url, floor=None):
    upstream = HERE / "upstream.py"
    config = fill(
        "stdio.agent.yaml.tmpl", tmp / "stdio.agent.yaml", python=sys.executable, upstream=upstream
    )
    db = database_url or f"sqlite://{tmp / 'stdio.db'}"
    gateway_env = clean_env(DATABASE_URL=db, DRAGNET_LOG="warn")
    # The store made once, untimed, so every gateway run starts on a
    # migrated store (as a client starting it again would).
    migrated = subprocess.run(
        [binary, "migrate"], env=gateway_env, cwd=tmp, capture_output=True, text=True, timeout=120
    )
    if migrated.returncode != 0:
        log(f"(dragnet migrate failed, the first gateway run migrates: {migrated.stderr.strip()[:300]})")
    plans = {
        "direct": {
            "variant": "direct",
            "calls": calls,
            "command": sys.executable,
            "args": [str(upstream)],
            "env": {},
        },
        "gateway": {
            "variant": "gateway",
            "calls": calls,
            "command": binary,
            "args": ["mcp", "--config", str(config), "--agent", "passthrough", "--stdio"],
            # Added to the client's environment, which is cleared of
            # dragnet's settings (`stdio_run`).
            "env": {"DATABASE_URL": db, "DRAGNET_LOG": "warn"},
        },
    }
    if floor:
        # The same upstream behind a hop that only parses and forwards
        # each message (bench/src/bin/stdio_floor.rs).
        plans["floor"] = dict(plans["direct"], variant="floor", command=floor,
                              args=[sys.executable, str(upstream)])
    runs = {variant: [] for variant in plans}
    timeout = max(120, calls * 0.2)
    for r in range(rounds):
        for variant in plans:
            report, wall = stdio_run(plans[variant], timeout, tmp)
            report["process_s"] = wall
            runs[variant].append(report)
            log(
                f"  stdio round {r + 1}/{rounds} {variant:<7}: {report['calls_s']:.3f} s for "
                f"{calls} calls, process {wall:.3f} s, errors {report['errors']}"
            )
    direct_s = median([x["calls_s"] for x in runs["direct"]])
    gateway_s = median([x["calls_s"] for x in runs["gateway"]])
    answers = {variant: runs[variant][0]["warm_answer"] for variant in runs}
    same = all(answer == answers["direct"] for answer in answers.values())
    if not same:
        log("  the answers differ:")
        for variant, answer in answers.items():
            log(f"    {variant:<7}:", json.dumps(answer))
    errors = sum(x["errors"] for v in runs.values() for x in v)

    def cpu_per_call_ms(variant):
        """The median of the server process's own CPU a call, or None."""
        seen = [x["server_cpu_s"] for x in runs[variant] if x.get("server_cpu_s") is not None]
        return round(median(seen) / calls * 1000, 4) if seen else None

    floor_s = median([x["calls_s"] for x in runs["floor"]]) if floor else None
    return {
        "calls": calls,
        "direct_s": round(direct_s, 4),
        "gateway_s": round(gateway_s, 4),
        "ratio": round(gateway_s / direct_s, 3),
        "direct_process_s": round(median([x["process_s"] for x in runs["direct"]]), 4),
        "gateway_process_s": round(median([x["process_s"] for x in runs["gateway"]]), 4),
        "direct_per_call_ms": round(direct_s / calls * 1000, 4),
        "gateway_per_call_ms": round(gateway_s / calls * 1000, 4),
        # The process the client started, alone: the upstream itself
        # (direct), or dragnet without the upstream it runs (gateway).
        "direct_server_cpu_ms_per_call": cpu_per_call_ms("direct"),
        "gateway_server_cpu_ms_per_call": cpu_per_call_ms("gateway"),
        # The floor: a hop that parses and forwards every message, no more.
        "floor_s": floor_s and round(floor_s, 4),
        "floor_ratio": floor_s and round(floor_s / direct_s, 3),
        "floor_per_call_ms": floor_s and round(floor_s / calls * 1000, 4),
        "floor_process_s": round(median([x["process_s"] for x in runs["floor"]]), 4) if floor else None,
        "floor_server_cpu_ms_per_call": cpu_per_call_ms("floor") if floor else None,
        "rounds": rounds,
        "errors": errors,
        "same_answer": same,
    }


# ----------------------------------------------------------------- (B) HTTP


def start_http_gateway(binary, config, env, log_path):
    """`dragnet mcp --http 127.0.0.1:0`; (the process, its /mcp URL)."""
    command = [binary, "mcp", "--config", str(config), "--http", "127.0.0.1:0"]
    return start_listening(command, env, config.parent, log_path)


def start_listening(command, env, cwd, log_path):
    """A server that prints its URL on its first line; (the process, the URL)."""
    proc = subprocess.Popen(
        command,
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=open(log_path, "wb"),
        start_new_session=True,
    )
    first = []

    def read():
        first.append(proc.stdout.readline().decode(errors="replace"))
        for _ in proc.stdout:  # drain, so the gateway never blocks on stdout
            pass

    threading.Thread(target=read, daemon=True).start()
    deadline = time.monotonic() + 60
    while not first and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    url = next((w for w in (first[0] if first else "").split() if w.startswith("http://")), None)
    if url is None:
        stop(proc)
        raise RuntimeError(
            f"no address from {Path(command[0]).name} ({first!r}):\n{Path(log_path).read_text(errors='replace')[-4000:]}"
        )
    return proc, url


async def mint(binary, config, env, users):
    """A token for each user, signed by `dragnet agent-token`."""
    gate = asyncio.Semaphore(8)

    async def one(user):
        async with gate:
            p = await asyncio.create_subprocess_exec(
                binary, "agent-token", "--config", str(config), "--agent", "analyst",
                "--user", user, "--hours", "1",
                env=env, cwd=config.parent, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            )
            out, err = await p.communicate()
            if p.returncode != 0:
                raise RuntimeError(f"agent-token failed: {err.decode(errors='replace')[-500:]}")
            return out.decode().strip()

    return await asyncio.gather(*(one(u) for u in users))


def text_answer(content):
    """The JSON answer in a call's content blocks (dicts, as on the wire):
    the first text block that parses."""
    for c in content or []:
        text = c.get("text") if isinstance(c, dict) else None
        if text:
            try:
                return json.loads(text)
            except ValueError:
                continue
    return None


def parsed_answer(result):
    """The JSON answer of an `mcp` client's call (its first text block that parses)."""
    return text_answer([{"text": getattr(c, "text", None)} for c in result.content])


def rows_of(answer):
    for key in ("items", "data", "orders"):
        if isinstance(answer.get(key), list):
            return answer[key]
    return None


def problem_of(is_error, answer, first_rows, error_text):
    """What is wrong with one timed answer, or None: it must be a labelled
    cache hit, complete, not cut, and as long as the first walk."""
    if is_error or not isinstance(answer, dict):
        return f"error {error_text()[:300]}"
    if not (answer.get("_cache") or {}).get("hit"):
        return f"not a cache hit ({answer.get('_cache')})"
    if answer.get("_pagingComplete") is not True or "_truncated" in answer:
        return "incomplete or cut"
    rows = len(rows_of(answer) or [])
    if rows != len(first_rows or []):
        return f"{rows} rows, not {len(first_rows or [])}"
    return None


def log_first_walk(first, hit):
    log(
        f"  first walk: complete={first.get('_pagingComplete')} rows={len(rows_of(first) or [])} "
        f"cut={'_truncated' in first} cache={first.get('_cache')}; "
        f"second: cache={hit.get('_cache') if isinstance(hit, dict) else None}"
    )


# -------------------------------------- (B) callers: raw JSON-RPC over HTTP

# The protocol of stateless requests, and of legacy sessions' `initialize`.
STATELESS_VERSION = "2026-07-28"
LEGACY_VERSION = "2025-06-18"
CLIENT_INFO = {"name": "dragnet-bench-gateway", "version": "1"}


def sse_messages(text):
    """The JSON-RPC messages of a `text/event-stream` body: each event's
    `data:` lines joined (events without data, such as the priming one, skipped)."""
    out = []
    for event in text.replace("\r\n", "\n").split("\n\n"):
        data = [line[5:].removeprefix(" ") for line in event.split("\n") if line.startswith("data:")]
        payload = "\n".join(data).strip()
        if payload:
            out.append(json.loads(payload))
    return out


def response_to(content_type, body, request_id):
    """The JSON-RPC response to `request_id` in an HTTP answer (JSON or SSE), or None."""
    text = body.decode("utf-8", errors="replace")
    if (content_type or "").split(";")[0].strip().lower() == "text/event-stream":
        messages = sse_messages(text)
    else:
        parsed = json.loads(text)
        messages = parsed if isinstance(parsed, list) else [parsed]
    for m in messages:
        if isinstance(m, dict) and m.get("id") == request_id and ("result" in m or "error" in m):
            return m
    return None


class RawCaller:
    """One caller over one keep-alive HTTP/1.1 connection, speaking JSON-RPC
    itself. `stateless`: every call a POST of its own (protocol 2026-07-28);
    else a legacy session, opened by `open` and ended by `close`."""

    def __init__(self, url, token, stateless):
        from urllib.parse import urlsplit

        u = urlsplit(url)
        self.path = u.path or "/"
        self.conn = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
        self.stateless = stateless
        self.next_id = 0
        self.headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        }
        self.session_id = None

    def post(self, message, extra_headers=None):
        """POSTs one message; (status, content type, body bytes, response headers)."""
        headers = dict(self.headers, **(extra_headers or {}))
        self.conn.request("POST", self.path, json.dumps(message).encode(), headers)
        response = self.conn.getresponse()
        body = response.read()
        return response.status, response.getheader("content-type"), body, response

    def open(self):
        self.conn.connect()
        if self.stateless:
            self.headers["MCP-Protocol-Version"] = STATELESS_VERSION
            return
        init = {
            "jsonrpc": "2.0", "id": self._id(), "method": "initialize",
            "params": {"protocolVersion": LEGACY_VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO},
        }
        status, ctype, body, response = self.post(init)
        answer = response_to(ctype, body, init["id"]) if status == 200 else None
        if answer is None or "result" not in answer:
            raise RuntimeError(f"initialize answered {status}: {body[:300]!r}")
        self.session_id = response.getheader("mcp-session-id")
        if not self.session_id:
            raise RuntimeError("initialize gave no Mcp-Session-Id")
        self.headers["Mcp-Session-Id"] = self.session_id
        self.headers["MCP-Protocol-Version"] = answer["result"].get("protocolVersion", LEGACY_VERSION)
        status, _, body, _ = self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        if status not in (200, 202):
            raise RuntimeError(f"notifications/initialized answered {status}: {body[:300]!r}")

    def _id(self):
        self.next_id += 1
        return self.next_id

    def call_message(self, tool, arguments):
        params = {"name": tool, "arguments": arguments}
        extra = None
        if self.stateless:
            params["_meta"] = {
                "io.modelcontextprotocol/protocolVersion": STATELESS_VERSION,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
            }
            # SEP-2243 routing headers (the tool's name is plain ASCII).
            extra = {"Mcp-Method": "tools/call", "Mcp-Name": tool}
        return {"jsonrpc": "2.0", "id": self._id(), "method": "tools/call", "params": params}, extra

    def call(self, tool, arguments):
        """One `tools/call`; (is_error, answer JSON or None, a description for errors)."""
        message, extra = self.call_message(tool, arguments)
        status, ctype, body, _ = self.post(message, extra)
        return self.read_call(message["id"], status, ctype, body)

    @staticmethod
    def read_call(request_id, status, ctype, body):
        if status != 200:
            return True, None, f"HTTP {status}: {body[:300]!r}"
        try:
            response = response_to(ctype, body, request_id)
        except ValueError as e:
            return True, None, f"unreadable answer ({e}): {body[:300]!r}"
        if response is None:
            return True, None, f"no response to id {request_id}: {body[:300]!r}"
        if "error" in response:
            return True, None, json.dumps(response["error"])[:300]
        result = response["result"]
        answer = text_answer(result.get("content"))
        return bool(result.get("isError")), answer, json.dumps(result.get("content"))[:300]

    def close(self):
        """Ends the legacy session (if any) and the connection; the DELETE's status."""
        status = None
        try:
            if self.session_id:
                self.conn.request("DELETE", self.path, headers=self.headers)
                response = self.conn.getresponse()
                response.read()
                status = response.status
        finally:
            self.conn.close()
        return status


def calls_outcome(latencies, wall, setup_s, problems, first_rows, answer_chars, first,
                  gateway_cpu, client_cpu_s, delete_answers):
    """What either HTTP load generator reports: the calls' latencies and
    wall time, the problems seen, the walk's shape, and the CPU seconds each
    side spent while the callers ran (which side is the limit)."""
    cpu0, cpu1 = gateway_cpu
    return {
        "latencies": latencies,
        "wall": wall,
        "setup_s": setup_s,
        "problems": problems,
        "rows": len(first_rows or []),
        "answer_chars": answer_chars[0] if answer_chars else None,
        "first_cache": first.get("_cache"),
        "gateway_cpu_s": None if cpu0 is None or cpu1 is None else cpu1 - cpu0,
        "client_cpu_s": client_cpu_s,
        "session_delete_answers": delete_answers,
    }


def warm_up(warm, say=True):
    """The walk that fills the cache (a miss on the fresh store), then one
    more on the same connection to see the hit's label; (the first
    answer, its rows). `say`: log what the two walks were."""
    try:
        warm.open()
        is_error, first, said = warm.call(WALK_TOOL, dict(WALK_ARGS))
        if is_error or not isinstance(first, dict):
            raise RuntimeError(f"the first walk failed: {said}")
        _, hit, _ = warm.call(WALK_TOOL, dict(WALK_ARGS))
    finally:
        warm.close()
    if say:
        log_first_walk(first, hit)
    return first, rows_of(first)


def bench_http_calls_raw(url, warm_token, tokens, per_caller, gateway_pid, mode, say=True):
    stateless = mode == "stateless"
    first, first_rows = warm_up(RawCaller(url, warm_token, stateless), say)

    callers = len(tokens)
    latencies = [[] for _ in tokens]
    problems = []  # list.append is atomic under the GIL
    answer_chars = []
    delete_statuses = {}
    ready = threading.Barrier(callers + 1, timeout=300)
    go = threading.Event()

    def caller(i, token):
        raw = RawCaller(url, token, stateless)
        opened = False
        try:
            raw.open()
            opened = True
        except Exception as e:
            problems.append(f"caller {i}: opening: {type(e).__name__}: {e}")
        try:
            ready.wait()
        except threading.BrokenBarrierError:
            problems.append(f"caller {i}: the others never got ready")
            return
        go.wait()
        mine = latencies[i]
        try:
            if opened:
                for _ in range(per_caller):
                    message, extra = raw.call_message(WALK_TOOL, dict(WALK_ARGS))
                    t0 = time.perf_counter()
                    status, ctype, body, _ = raw.post(message, extra)
                    mine.append(time.perf_counter() - t0)
                    # Read after the clock stops: parsing is the client's work.
                    is_error, answer, said = RawCaller.read_call(message["id"], status, ctype, body)
                    if not answer_chars and answer is not None:
                        content = response_to(ctype, body, message["id"])["result"]["content"]
                        answer_chars.append(sum(len(c.get("text") or "") for c in content))
                    wrong = problem_of(is_error, answer, first_rows, lambda: said)
                    if wrong:
                        problems.append(f"caller {i}: {wrong}")
        except Exception as e:  # reported, not raised: the others go on
            problems.append(f"caller {i}: {type(e).__name__}: {e}")
        finally:
            try:
                status = raw.close()
                if status is not None and status not in (200, 202, 204):
                    delete_statuses[status] = delete_statuses.get(status, 0) + 1
            except Exception as e:
                delete_statuses[type(e).__name__] = delete_statuses.get(type(e).__name__, 0) + 1

    t_setup = time.perf_counter()
    threads = [threading.Thread(target=caller, args=(i, t), daemon=True) for i, t in enumerate(tokens)]
    for t in threads:
        t.start()
    ready.wait()
    setup_s = time.perf_counter() - t_setup
    cpu0, client0 = cpu_seconds(gateway_pid), time.process_time()
    t0 = time.perf_counter()
    go.set()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    cpu1, client1 = cpu_seconds(gateway_pid), time.process_time()
    # This client's CPU includes its threads' session DELETEs (legacy).
    return calls_outcome([x for mine in latencies for x in mine], wall, setup_s, problems,
                         first_rows, answer_chars, first, (cpu0, cpu1), client1 - client0,
                         {str(k): v for k, v in delete_statuses.items()})


# -------------------------------------- (B) callers: wrk

# wrk's script: every request a stateless 2026-07-28 `tools/call` of the
# walk, the tokens taken in turn; each answer checked (a cache hit,
# complete, not cut, the first walk's row count); `done` prints one JSON
# line. wrk runs for a duration, not a number of calls.
WRK_LUA = r"""
local tokens, body, rows, sent, seen = {}, nil, 0, 0, 0
local threads = {}
problems, first_problem = 0, ""
function setup(thread)
  thread:set("offset", math.random(1, 100000))
  table.insert(threads, thread)
end
function init(args)
  for line in io.lines(args[1]) do table.insert(tokens, line) end
  local f = io.open(args[2]); body = f:read("*a"); f:close()
  rows = tonumber(args[3])
  sent = offset or 0
end
function request()
  sent = sent + 1
  local headers = {
    ["Authorization"] = "Bearer " .. tokens[(sent % #tokens) + 1],
    ["Accept"] = "application/json, text/event-stream",
    ["Content-Type"] = "application/json",
    ["MCP-Protocol-Version"] = "2026-07-28",
    ["Mcp-Method"] = "tools/call",
    ["Mcp-Name"] = "listOrders",
  }
  return wrk.format("POST", nil, headers, body)
end
local function count(text, pattern)
  local n = 0
  for _ in string.gmatch(text, pattern) do n = n + 1 end
  return n
end
function response(status, headers, answer)
  seen = seen + 1
  local wrong = nil
  if status ~= 200 then wrong = "HTTP " .. status
  elseif not string.find(answer, '\\"hit\\":true', 1, true) then wrong = "not a cache hit"
  elseif not string.find(answer, '\\"_pagingComplete\\":true', 1, true) then wrong = "incomplete"
  elseif string.find(answer, '_truncated', 1, true) then wrong = "cut"
  elseif count(answer, '\\"status\\":') ~= rows then wrong = "rows: " .. count(answer, '\\"status\\":')
  end
  if wrong then
    problems = problems + 1
    if first_problem == "" then first_problem = wrong .. ": " .. string.sub(answer, 1, 300) end
  end
end
local function quoted(text)
  return '"' .. string.gsub(text, '[%c"\\]', function(c)
    return string.format("\\u%04x", string.byte(c))
  end) .. '"'
end
function done(summary, latency, requests)
  local wrong, first = 0, ""
  for _, t in ipairs(threads) do
    wrong = wrong + t:get("problems")
    if first == "" then first = t:get("first_problem") end
  end
  local out = {
    string.format('"problems":%d', wrong),
    '"first_problem":' .. quoted(first),
    string.format('"calls":%d', summary.requests),
    string.format('"wall_s":%.6f', summary.duration / 1e6),
    string.format('"errors":%d', summary.errors.status + summary.errors.connect
      + summary.errors.read + summary.errors.write + summary.errors.timeout),
    string.format('"min_ms":%.3f', latency.min / 1000),
    string.format('"p50_ms":%.3f', latency:percentile(50) / 1000),
    string.format('"p90_ms":%.3f', latency:percentile(90) / 1000),
    string.format('"p99_ms":%.3f', latency:percentile(99) / 1000),
    string.format('"max_ms":%.3f', latency.max / 1000),
  }
  io.write("{" .. table.concat(out, ",") .. "}\n")
end
"""


def bench_http_calls_wrk(url, warm_token, tokens, seconds, gateway_pid, tmp):
    """The callers as wrk's connections (2 threads, one connection per
    caller): a C load generator, so the client's own CPU does not crowd
    the gateway's on the same cores. (latency percentiles, the rest as
    `calls_outcome`.)"""
    warm = RawCaller(url, warm_token, True)
    first, first_rows = warm_up(warm)
    message, _ = warm.call_message(WALK_TOOL, dict(WALK_ARGS))
    (tmp / "wrk.lua").write_text(WRK_LUA)
    (tmp / "wrk.tokens").write_text("\n".join(tokens) + "\n")
    (tmp / "wrk.body").write_text(json.dumps(message))
    command = [
        "wrk", "-t", "2", "-c", str(len(tokens)), "-d", f"{seconds}s", "--timeout", "60s",
        "-s", str(tmp / "wrk.lua"), url, "--",
        str(tmp / "wrk.tokens"), str(tmp / "wrk.body"), str(len(first_rows or [])),
    ]
    cpu0 = cpu_seconds(gateway_pid)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    ran = subprocess.run(command, capture_output=True, text=True, timeout=900)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu1 = cpu_seconds(gateway_pid)
    if ran.returncode != 0:
        raise RuntimeError(f"wrk failed ({ran.returncode}): {ran.stderr[-2000:]}")
    said = json.loads(ran.stdout.strip().splitlines()[-1])
    problems = [said["first_problem"]] * said["problems"] if said["problems"] else []
    if said["errors"]:
        problems.append(f"{said['errors']} socket or status errors (wrk)")
    client_cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    outcome = calls_outcome([], said["wall_s"], 0.0, problems, first_rows, [], first, (cpu0, cpu1), client_cpu, {})
    outcome["wrk"] = said
    return outcome


# -------------------------------------- (B) callers: the Python mcp client


class Terminations(logging.Filter):
    """Counts (and keeps off stderr) the client's warning that a session's
    DELETE was answered with a status other than 200/204."""

    seen = {}

    def filter(self, record):
        message = record.getMessage()
        if message.startswith("Session termination failed"):
            key = message.removeprefix("Session termination failed: ")
            self.seen[key] = self.seen.get(key, 0) + 1
            return False
        return True


def session(url, token, mode):
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120)
    client_mode = "legacy" if mode == "legacy" else STATELESS_VERSION
    return http, Client(streamable_http_client(url, http_client=http), mode=client_mode, cache=None)


async def bench_http_calls_mcp(url, warm_token, tokens, per_caller, gateway_pid, mode):
    terminations = Terminations()
    logging.getLogger("mcp.client.streamable_http").addFilter(terminations)
    # The walk that fills the cache (a miss on the fresh store), then one
    # more in the same session to see the hit's label.
    http, client = session(url, warm_token, mode)
    async with http, client:
        miss = await client.call_tool(WALK_TOOL, dict(WALK_ARGS))
        first = parsed_answer(miss)
        if miss.is_error or first is None:
            raise RuntimeError(f"the first walk failed: {[getattr(c, 'text', c) for c in miss.content]}")
        hit = parsed_answer(await client.call_tool(WALK_TOOL, dict(WALK_ARGS)))
    log_first_walk(first, hit)
    first_rows = rows_of(first)

    callers = len(tokens)
    latencies = []
    problems = []
    answer_chars = []
    ready = 0
    all_ready = asyncio.Event()
    go = asyncio.Event()

    def arrived():
        nonlocal ready
        ready += 1
        if ready == callers:
            all_ready.set()

    async def caller(i, token):
        joined = False
        try:
            http, client = session(url, token, mode)
            async with http, client:
                joined = True
                arrived()
                await go.wait()
                for _ in range(per_caller):
                    t0 = time.perf_counter()
                    result = await client.call_tool(WALK_TOOL, dict(WALK_ARGS))
                    latencies.append(time.perf_counter() - t0)
                    answer = parsed_answer(result)
                    if not answer_chars and answer is not None:
                        answer_chars.append(sum(len(getattr(c, "text", "") or "") for c in result.content))
                    wrong = problem_of(
                        result.is_error, answer, first_rows,
                        lambda: str([getattr(c, "text", c) for c in result.content][:1]),
                    )
                    if wrong:
                        problems.append(f"caller {i}: {wrong}")
        except Exception as e:  # reported, not raised: the others go on
            problems.append(f"caller {i}: {type(e).__name__}: {e}")
        finally:
            if not joined:
                arrived()

    t_setup = time.perf_counter()
    tasks = [asyncio.create_task(caller(i, t)) for i, t in enumerate(tokens)]
    await asyncio.wait_for(all_ready.wait(), 300)
    setup_s = time.perf_counter() - t_setup
    cpu0, client0 = cpu_seconds(gateway_pid), time.process_time()
    t0 = time.perf_counter()
    go.set()
    await asyncio.gather(*tasks)
    wall = time.perf_counter() - t0
    cpu1, client1 = cpu_seconds(gateway_pid), time.process_time()
    # This client's CPU includes its sessions' closing (legacy); the
    # DELETE answers counted are those not 200/204, by answer.
    return calls_outcome(latencies, wall, setup_s, problems, first_rows, answer_chars, first,
                         (cpu0, cpu1), client1 - client0, dict(terminations.seen))


# -------------------------------------------------- (B) the gateway and totals


def kept_answer(url, token, path):
    """One stateless call of the walk (a cache hit by now), its JSON-RPC
    response written to `path`: what the HTTP floor answers."""
    raw = RawCaller(url, token, stateless=True)
    try:
        raw.open()
        message, extra = raw.call_message(WALK_TOOL, dict(WALK_ARGS))
        status, ctype, body, _ = raw.post(message, extra)
    finally:
        raw.close()
    answer = response_to(ctype, body, message["id"]) if status == 200 else None
    if answer is None:
        raise RuntimeError(f"the walk answered {status}: {body[:300]!r}")
    path.write_text(json.dumps(answer))
    return path


def bench_http_floor(floor, answer, tokens, per_caller, mode, tmp):
    """The raw callers again, against bench/src/bin/http_floor.rs answering
    `answer` to every call: what these callers see of a server that costs
    next to nothing."""
    server = None
    try:
        server, url = start_listening([floor, str(answer)], clean_env(), tmp, tmp / "http-floor.log")
        seen = bench_http_calls_raw(url, tokens[0], tokens[1:], per_caller, server.pid, mode, say=False)
    finally:
        stop(server)
    lat = sorted(seen["latencies"])
    return {
        "calls": len(lat),
        "per_s": round(len(lat) / seen["wall"], 1) if seen["wall"] else None,
        **latency_ms(lat),
        "problems": len(seen["problems"]),
        "server_cpu_s": None if seen["gateway_cpu_s"] is None else round(seen["gateway_cpu_s"], 3),
        "client_cpu_ms_per_call": round(seen["client_cpu_s"] / len(lat) * 1000, 4) if lat else None,
    }


def bench_http(binary, tmp, callers, per_caller, database_url, client, mode, wrk_seconds=5, floor=None):
    config = fill("http.agent.yaml.tmpl", tmp / "http.agent.yaml", openapi=SHOP_OPENAPI)
    db = database_url or f"sqlite://{tmp / 'http.db'}"
    # The token secret: random per run, passed by environment, never printed.
    env = clean_env(
        DATABASE_URL=db,
        DRAGNET_LOG="warn",
        DRAGNET_CACHE_MODE="on",
        BENCH_MCP_TOKEN_SECRET=secrets.token_urlsafe(48),
    )
    gateway = None
    log_path = tmp / "http-gateway.log"
    # The floor needs the raw callers' stateless calls (it answers no session).
    with_floor = bool(floor) and client == "raw" and mode == "stateless"
    try:
        gateway, url = start_http_gateway(binary, config, env, log_path)
        users = ["bench-warm"] + [f"bench-{i}" for i in range(callers)]
        tokens = asyncio.run(mint(binary, config, env, users))
        if client == "raw":
            seen = bench_http_calls_raw(url, tokens[0], tokens[1:], per_caller, gateway.pid, mode)
            if with_floor:
                answer = kept_answer(url, tokens[0], tmp / "http-floor-answer.json")
        elif client == "wrk":
            seen = bench_http_calls_wrk(url, tokens[0], tokens[1:], wrk_seconds, gateway.pid, tmp)
        else:
            seen = asyncio.run(bench_http_calls_mcp(url, tokens[0], tokens[1:], per_caller, gateway.pid, mode))
    finally:
        stop(gateway)
    # After the gateway stopped, so the floor has the cores to itself.
    floor_seen = None
    if with_floor:
        floor_seen = bench_http_floor(floor, answer, tokens, per_caller, mode, tmp)
    lat = sorted(seen["latencies"])
    n = len(lat)
    by_wrk = seen.get("wrk")
    if by_wrk:
        n = by_wrk["calls"]
    if seen["problems"]:
        log(f"  {len(seen['problems'])} problems, the first ones:")
        for p in seen["problems"][:5]:
            log("   ", p)
        tail = log_path.read_text(errors="replace").strip()
        if tail:
            log("  gateway log (tail):\n" + tail[-2000:])
    if client == "wrk":
        sessions = "stateless 2026-07-28 POSTs by wrk (2 threads), one keep-alive connection per caller, the tokens taken in turn"
    elif client == "raw":
        sessions = (
            "stateless 2026-07-28 POSTs (no initialize), one keep-alive connection and token per caller thread"
            if mode == "stateless"
            else "one legacy MCP session per caller thread (raw JSON-RPC), its own connection and token"
        )
    else:
        sessions = f"one {'legacy MCP session' if mode == 'legacy' else '2026-07-28 mcp client'} per caller (asyncio task), each with its own token"
    own = latency_ms(lat)
    pick = lambda key: by_wrk[key] if by_wrk else own[key]  # noqa: E731
    return {
        "callers": callers,
        "calls": n,
        "per_s": round(n / seen["wall"], 1) if seen["wall"] else None,
        "p50_ms": pick("p50_ms"),
        "p99_ms": pick("p99_ms"),
        "max_ms": pick("max_ms"),
        "cached": (bool(n) if by_wrk else n == callers * per_caller) and not seen["problems"],
        "client": client,
        "mode": mode,
        "per_caller": per_caller,
        "sessions": sessions,
        "wall_s": round(seen["wall"], 4),
        "setup_s": round(seen["setup_s"], 4),
        "rows": seen["rows"],
        "answer_chars": seen["answer_chars"],
        "problems": len(seen["problems"]),
        "gateway_cpu_s": None if seen["gateway_cpu_s"] is None else round(seen["gateway_cpu_s"], 3),
        "client_cpu_s": round(seen["client_cpu_s"], 3),
        "gateway_cpu_ms_per_call": None
        if seen["gateway_cpu_s"] is None or not n
        else round(seen["gateway_cpu_s"] / n * 1000, 3),
        "client_cpu_ms_per_call": round(seen["client_cpu_s"] / n * 1000, 3) if n else None,
        "p90_ms": pick("p90_ms"),
        "min_ms": pick("min_ms"),
        # Calls that took 40 ms or more: Linux's delayed-ACK timer. An answer
        # whose headers leave before its body (always in a legacy session:
        # an SSE priming event first) waits for the client's ACK while the
        # gateway's socket has Nagle on (no TCP_NODELAY); the count shows
        # whether it still does.
        "calls_40ms_or_more": None if by_wrk else sum(1 for x in lat if x >= 0.040),
        # Sessions whose closing DELETE was not answered 200/202/204, by answer.
        "session_delete_answers": seen["session_delete_answers"],
        # The same callers against bench/src/bin/http_floor.rs answering the
        # same response (raw stateless callers, with --floor-http), or None.
        "floor": floor_seen,
    }


# ------------------------------------------------------------------- main


def table(stdio, http):
    if stdio:
        log("")
        log("stdio: %d sequential tools/call of order_status (median of %d runs each)" % (stdio["calls"], stdio["rounds"]))
        log(f"  {'variant':<9}{'calls s':>10}{'per call ms':>13}{'process s':>11}")
        log(f"  {'direct':<9}{stdio['direct_s']:>10.3f}{stdio['direct_per_call_ms']:>13.3f}{stdio['direct_process_s']:>11.3f}")
        log(f"  {'gateway':<9}{stdio['gateway_s']:>10.3f}{stdio['gateway_per_call_ms']:>13.3f}{stdio['gateway_process_s']:>11.3f}")
        if stdio["floor_s"] is not None:
            log(f"  {'floor':<9}{stdio['floor_s']:>10.3f}{stdio['floor_per_call_ms']:>13.3f}{stdio['floor_process_s']:>11.3f}")
        log(f"  gateway/direct: {stdio['ratio']:.3f}   errors: {stdio['errors']}   same answer: {stdio['same_answer']}")
        if stdio["floor_ratio"] is not None:
            log(f"  floor/direct: {stdio['floor_ratio']:.3f}   (a hop that only parses and forwards each message)")
        def ms(x):
            return "unknown" if x is None else f"{x:.3f} ms"

        log(f"  CPU a call of the process the client started: dragnet alone "
            f"{ms(stdio['gateway_server_cpu_ms_per_call'])}, the upstream (direct) "
            f"{ms(stdio['direct_server_cpu_ms_per_call'])}"
            + (f", the floor alone {ms(stdio['floor_server_cpu_ms_per_call'])}" if stdio["floor_s"] is not None else ""))
    if http:
        log("")
        log(
            f"http ({http['client']} client, {http['mode']}): {http['callers']} callers x {http['per_caller']} "
            f"cached {WALK_TOOL} walks ({http['rows']} rows, {http['answer_chars']} chars)"
        )
        log(f"  calls {http['calls']} in {http['wall_s']:.3f} s: {http['per_s']} calls/s")
        log(
            f"  latency ms: min {http['min_ms']}  p50 {http['p50_ms']}  p90 {http['p90_ms']}  "
            f"p99 {http['p99_ms']}  max {http['max_ms']}   (>= 40 ms: {http['calls_40ms_or_more']})"
        )
        log(
            f"  CPU while they ran: gateway {http['gateway_cpu_s']} s ({http['gateway_cpu_ms_per_call']} ms a call), "
            f"this client {http['client_cpu_s']} s ({http['client_cpu_ms_per_call']} ms a call), "
            f"of {http['wall_s']:.3f} s wall"
        )
        log(f"  all cache hits and complete: {http['cached']}   problems: {http['problems']}   (callers ready in {http['setup_s']:.2f} s)")
        f = http.get("floor")
        if f:
            log(
                f"  the same callers against a server that only answers (http_floor): {f['per_s']} calls/s, "
                f"p50 {f['p50_ms']}  p90 {f['p90_ms']}  p99 {f['p99_ms']}  max {f['max_ms']} ms; "
                f"this client {f['client_cpu_ms_per_call']} ms of CPU a call; problems: {f['problems']}"
            )
        if http["session_delete_answers"]:
            log(f"  session DELETEs not answered 200/202/204 (answer: count): {http['session_delete_answers']}")


def executable(path, what):
    """`path` made absolute; exits when it is not an executable file."""
    resolved = str(Path(path).resolve())
    if not os.access(resolved, os.X_OK):
        sys.exit(f"no executable {what} at {resolved}")
    return resolved


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary", help="the dragnet binary (a release build)")
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--callers", type=int, default=100)
    ap.add_argument("--per-caller", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3, help="stdio runs of each variant")
    ap.add_argument("--database-url", help="the gateway's store (default: SQLite files in a temp dir)")
    ap.add_argument(
        "--http-client", choices=["raw", "wrk", "mcp"], default="raw",
        help="(B)'s callers: raw JSON-RPC over http.client, one thread each (default), wrk's connections "
        "(stateless only; a C load generator), or the Python mcp client",
    )
    ap.add_argument(
        "--http-mode", choices=["stateless", "legacy"],
        help="(B)'s protocol: stateless 2026-07-28 requests or legacy sessions "
        "(default: stateless for the raw client, legacy for the mcp client)",
    )
    ap.add_argument("--wrk-seconds", type=int, default=5, help="how long wrk's callers run (--http-client wrk)")
    ap.add_argument(
        "--floor",
        help="(A) also through this stdio_floor binary (cargo build --release -p dragnet-bench --bin "
        "stdio_floor): the least a hop that parses every message costs",
    )
    ap.add_argument(
        "--floor-http",
        help="(B), raw stateless callers: then the same callers against this http_floor binary "
        "(cargo build --release -p dragnet-bench --bin http_floor), a server that only answers",
    )
    ap.add_argument("--only", choices=["stdio", "http"], help="run one part only (the other is null in the JSON)")
    args = ap.parse_args()
    mode = args.http_mode or ("legacy" if args.http_client == "mcp" else "stateless")
    if args.http_client == "wrk" and mode != "stateless":
        sys.exit("--http-client wrk sends stateless requests only")
    binary = executable(args.binary, "dragnet")
    floor = args.floor and executable(args.floor, "stdio_floor")
    floor_http = args.floor_http and executable(args.floor_http, "http_floor")

    tmp = Path(tempfile.mkdtemp(prefix="dragnet-bench-gateway-"))
    started = time.perf_counter()
    load_start = os.getloadavg()[0]
    try:
        stdio = http = None
        if args.only in (None, "stdio"):
            log(f"(A) stdio: {args.calls} calls, {args.rounds} rounds, alternating")
            stdio = bench_stdio(binary, tmp, args.calls, args.rounds, args.database_url, floor)
        if args.only in (None, "http"):
            log(f"(B) http: {args.callers} callers x {args.per_caller} calls ({args.http_client} client, {mode})")
            http = bench_http(
                binary, tmp, args.callers, args.per_caller, args.database_url, args.http_client, mode,
                args.wrk_seconds, floor_http,
            )
        table(stdio, http)
        # The machine: other work running meanwhile skews every number.
        host = {"cpus": os.cpu_count(), "load1_start": round(load_start, 2), "load1_end": round(os.getloadavg()[0], 2)}
        log(f"\n(total {time.perf_counter() - started:.1f} s; {host['cpus']} CPUs, load {host['load1_start']} -> {host['load1_end']})")
        print(json.dumps({"stdio": stdio, "http": http, "host": host}))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
