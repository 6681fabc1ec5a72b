#!/usr/bin/env python3
"""Runs per second through one `dragnet serve` on PostgreSQL (not a test, never asserted).

One `dragnet serve` that also runs what it is sent (`DRAGNET_MAX_RUNNING_RUNS`
slots, 50 by default; its database pool is the server's default unless
--pool-size says otherwise) on a fresh PostgreSQL schema made for this
invocation and dropped at its end, against the demo shop in its own process
(every page delayed by --latency ms through the shop's `X-Shop-Fault:
latency=MS` header). The workflow is one step that walks every page of a
small collection: property 3's orders, 100 a page (186 orders, two
pages), so each run is short and what is measured is the server's
overhead per run: accepting it, queueing it, claiming it, running it and
recording it.

For each level of concurrent submitters N (10, 50, 100, 200), N threads
POST /v1/workflows/walk/runs as fast as they can, each on its own
keep-alive connection, until the level's total (2,000) is submitted,
recording each submission's client time (time.time() just before the
request) and run id. The script then waits, polling GET /v1/runs, until
every run of the level has ended (--timeout, 600 s by default; past it the
script stops and says how many runs had not ended), reads each run with
GET /v1/runs/{id} and reports:

- accepted_per_s: runs / (the last 201's arrival - the first submission);
- end_to_end_per_s: runs / (the last run's finished_at, the server's clock,
  - the first submission);
- start_p50_ms, start_p99_ms: the run's started_at (the server's clock, set
  when its executor starts it, so it includes any wait for a slot) minus
  the client's submission time: the same machine and the same clock;
- succeeded, failed: runs whose status is `succeeded`, and all the others
  (partial, failed, cancelled, interrupted...), broken down on stderr;
  submit_errors: submissions that got no 201 (they are not runs, and not
  in `runs`).

The levels run one after the other in the same server and schema, so a
later level finds the earlier levels' runs in the tables. The Python
submitters share the machine (and the GIL) with the server, the shop and
PostgreSQL: on a small machine they take part of the CPU they measure.

Prints a table to stderr and, as the last line of stdout, one JSON object:
{"levels": [{"submitters", "runs", "accepted_per_s", "end_to_end_per_s",
"start_p50_ms", "start_p99_ms", "succeeded", "failed", "submit_errors"}, ...]}.

Usage: bench/runs_per_second.py BINARY [--submitters 10,50,100,200]
           [--runs-per-level 2000] [--latency 20] [--slots 50]
           [--pool-size N] [--timeout 600]
BINARY is a release `dragnet` binary. Needs Python 3.8+ (stdlib only), psql,
and PostgreSQL at DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres).
"""

import argparse
import http.client
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timedelta, timezone

BASE = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
ENDED = {"succeeded", "partial", "failed", "cancelled", "interrupted"}


def log(*parts):
    print(*parts, file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def clean_env():
    return {k: v for k, v in os.environ.items() if not k.startswith("DRAGNET_")}


def psql(*args):
    return subprocess.run(["psql", BASE, "-q", *args], check=True, capture_output=True,
                          text=True)


_STAMP = re.compile(r"(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:\.(\d+))?"
                    r"(Z|[+-]\d\d:?\d\d)?$")


def stamp(text):
    """Seconds since the epoch of an RFC 3339 time (any fraction digits)."""
    m = _STAMP.match(text)
    if not m:
        raise ValueError(f"not a time: {text!r}")
    y, mo, d, h, mi, s = (int(m.group(i)) for i in range(1, 7))
    at = datetime(y, mo, d, h, mi, s, tzinfo=timezone.utc).timestamp()
    if m.group(7):
        at += int(m.group(7)) / 10 ** len(m.group(7))
    zone = m.group(8)
    if zone and zone != "Z":
        sign = -1 if zone[0] == "-" else 1
        zh, zm = int(zone[1:3]), int(zone[-2:])
        at -= sign * timedelta(hours=zh, minutes=zm).total_seconds()
    return at


class Api:
    """One keep-alive connection to the server (one per thread)."""

    def __init__(self, port, token):
        self.port = port
        self.headers = {"Authorization": f"Bearer {token}",
                        "Content-Type": "application/json"}
        self.conn = None

    def request(self, method, path, body=None):
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            self.conn.request(method, path, body=body, headers=self.headers)
            r = self.conn.getresponse()
            return r.status, r.read()
        except Exception:
            self.close()
            raise

    def get_json(self, path):
        """GET `path`; a dropped keep-alive connection is retried once."""
        for attempt in (1, 2):
            try:
                status, body = self.request("GET", path)
                break
            except (http.client.HTTPException, ConnectionError):
                if attempt == 2:
                    raise
        if status != 200:
            raise RuntimeError(f"GET {path}: {status} {body[:300]!r}")
        return json.loads(body)

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


class Procs:
    """The processes this script started, each logging to a file."""

    def __init__(self, workdir):
        self.workdir = workdir
        self.procs = []

    def start(self, name, argv, env):
        out = open(os.path.join(self.workdir, f"{name}.log"), "w")
        p = subprocess.Popen(argv, env=env, cwd=self.workdir, stdin=subprocess.DEVNULL,
                             stdout=out, stderr=subprocess.STDOUT)
        out.close()
        p.name = name
        self.procs.append(p)
        return p

    def tail(self, p, lines=20):
        try:
            with open(os.path.join(self.workdir, f"{p.name}.log")) as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""

    def wait_http(self, p, port, path, deadline_s=30):
        """Until `path` answers 200, or fail saying why (with the process's log)."""
        until = time.monotonic() + deadline_s
        while time.monotonic() < until:
            if p.poll() is not None:
                sys.exit(f"{p.name} exited with {p.returncode}:\n{self.tail(p)}")
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                c.request("GET", path)
                if c.getresponse().status == 200:
                    c.close()
                    return
                c.close()
            except OSError:
                pass
            time.sleep(0.05)
        sys.exit(f"{p.name} did not answer {path} within {deadline_s} s:\n{self.tail(p)}")

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def quantile(values, q):
    """The q-quantile (0..1) of `values`, interpolated; None when empty."""
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return cuts[round(q * 100) - 1]


def submit_level(port, token, submitters, total, stop):
    """N threads submit until `total`; the accepted runs and the errors."""
    lock = threading.Lock()
    taken = [0]
    accepted = []  # (run_id, sent_at, answered_at)
    errors = []  # (status or exception, body)

    def submitter():
        api = Api(port, token)
        try:
            while not stop.is_set():
                with lock:
                    if taken[0] >= total:
                        return
                    taken[0] += 1
                sent = time.time()
                try:
                    status, body = api.request("POST", "/v1/workflows/walk/runs", b"{}")
                except Exception as e:  # counted, never hidden
                    errors.append((type(e).__name__, str(e)[:200]))
                    continue
                answered = time.time()
                if status == 201:
                    accepted.append((json.loads(body)["run_id"], sent, answered))
                else:
                    errors.append((status, body[:200].decode(errors="replace")))
        finally:
            api.close()

    threads = [threading.Thread(target=submitter, daemon=True) for _ in range(submitters)]
    for t in threads:
        t.start()
    for t in threads:
        while t.is_alive():
            t.join(0.2)
    return accepted, errors


def wait_ended(api, ids, timeout, stop):
    """Polls GET /v1/runs (newest first) until every run in `ids` has ended."""
    until = time.monotonic() + timeout
    seen = {}
    while not stop.is_set():
        seen = {}
        cursor, pages = None, 0
        # This level's runs are the newest; page until all were seen (a run
        # whose started_at moves while we page may be missed in one sweep,
        # never counted ended before it has).
        while True:
            path = "/v1/runs?workflow=walk&limit=500" + (f"&cursor={cursor}" if cursor else "")
            page = api.get_json(path)
            pages += 1
            for r in page["runs"]:
                if r["run_id"] in ids:
                    seen[r["run_id"]] = r["status"]
            cursor = page.get("next_cursor")
            if len(seen) == len(ids) or not cursor or pages > len(ids) // 500 + 4:
                break
        ended = sum(1 for s in seen.values() if s in ENDED)
        if ended == len(ids):
            return
        if time.monotonic() > until:
            counts = {}
            for s in seen.values():
                counts[s] = counts.get(s, 0) + 1
            sys.exit(f"timed out after {timeout} s: {ended} of {len(ids)} runs ended "
                     f"(statuses seen: {counts}, not seen: {len(ids) - len(seen)})")
        time.sleep(0.2)
    raise KeyboardInterrupt


def read_runs(port, token, ids, stop):
    """GET /v1/runs/{id} of every run, 8 at a time: {id: record}."""
    records, lock, todo = {}, threading.Lock(), list(ids)
    failures = []

    def reader():
        api = Api(port, token)
        try:
            while not stop.is_set():
                with lock:
                    if not todo:
                        return
                    run_id = todo.pop()
                try:
                    records[run_id] = api.get_json(f"/v1/runs/{run_id}")
                except Exception as e:
                    failures.append(f"{run_id}: {e}")
        finally:
            api.close()

    threads = [threading.Thread(target=reader, daemon=True) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        while t.is_alive():
            t.join(0.2)
    if stop.is_set():
        raise KeyboardInterrupt
    if failures:
        sys.exit(f"could not read {len(failures)} runs, e.g. {failures[0]}")
    return records


def run_level(port, token, submitters, total, timeout, stop):
    accepted, errors = submit_level(port, token, submitters, total, stop)
    if stop.is_set():
        raise KeyboardInterrupt
    if not accepted:
        sys.exit(f"no run was accepted with {submitters} submitters; e.g. {errors[:1]}")
    ids = {run_id for run_id, _, _ in accepted}
    api = Api(port, token)
    try:
        wait_ended(api, ids, timeout, stop)
    finally:
        api.close()
    records = read_runs(port, token, ids, stop)
    first_sent = min(sent for _, sent, _ in accepted)
    last_answer = max(answered for _, _, answered in accepted)
    starts, ends, statuses, walks = [], [], {}, {}
    for run_id, sent, _ in accepted:
        rec = records[run_id]
        statuses[rec["status"]] = statuses.get(rec["status"], 0) + 1
        verdict = (rec.get("steps") or [{}])[0].get("verdict") or {}
        walk = (verdict.get("requests"), verdict.get("itemCount"))
        walks[walk] = walks.get(walk, 0) + 1
        starts.append((stamp(rec["started_at"]) - sent) * 1000)
        if rec.get("finished_at"):
            ends.append(stamp(rec["finished_at"]))
    runs = len(accepted)
    succeeded = statuses.get("succeeded", 0)
    p50, p99 = quantile(starts, 0.50), quantile(starts, 0.99)
    return {
        "submitters": submitters,
        "runs": runs,
        "accepted_per_s": round(runs / max(last_answer - first_sent, 1e-9), 1),
        "end_to_end_per_s": round(runs / max(max(ends) - first_sent, 1e-9), 1) if ends else None,
        "start_p50_ms": round(p50, 1) if p50 is not None else None,
        "start_p99_ms": round(p99, 1) if p99 is not None else None,
        "succeeded": succeeded,
        "failed": runs - succeeded,
        "submit_errors": len(errors),
        # Shown on stderr only.
        "_statuses": statuses,
        "_walks": walks,
        "_errors": errors[:3],
        "_submit_s": last_answer - first_sent,
        "_end_s": (max(ends) - first_sent) if ends else None,
    }


def walk_size(shop_port, query):
    """Pages and rows of one walk of the workflow's collection (read directly)."""
    pages = rows = 0
    while True:
        c = http.client.HTTPConnection("127.0.0.1", shop_port, timeout=30)
        c.request("GET", f"/orders?{query}&page={pages + 1}")
        doc = json.loads(c.getresponse().read())
        c.close()
        pages += 1
        rows += len(doc["data"])
        if not doc["data"] or pages * 100 >= doc["meta"]["total"]:
            return pages, rows


def table(levels):
    head = ("submitters", "runs", "accepted/s", "end-to-end/s", "start p50 ms",
            "start p99 ms", "succeeded", "failed", "submit errors", "submit s", "to last end s")
    rows = [head]
    for lv in levels:
        rows.append((lv["submitters"], lv["runs"], lv["accepted_per_s"], lv["end_to_end_per_s"],
                     lv["start_p50_ms"], lv["start_p99_ms"], lv["succeeded"], lv["failed"],
                     lv["submit_errors"], f"{lv['_submit_s']:.2f}",
                     "-" if lv["_end_s"] is None else f"{lv['_end_s']:.2f}"))
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(head))]
    for r in rows:
        log("  ".join(str(v).rjust(w) for v, w in zip(r, widths)))
    for lv in levels:
        others = {s: n for s, n in lv["_statuses"].items() if s != "succeeded"}
        if others:
            log(f"{lv['submitters']} submitters: runs not succeeded by status: {others}")
        walks = ", ".join(f"{n} runs: {req} requests, {items} orders"
                          for (req, items), n in sorted(lv["_walks"].items(), key=str))
        log(f"{lv['submitters']} submitters: walks per run ({walks})")
        if lv["submit_errors"]:
            log(f"{lv['submitters']} submitters: {lv['submit_errors']} submissions refused, "
                f"e.g. {lv['_errors']}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("binary")
    ap.add_argument("--submitters", default="10,50,100,200",
                    help="comma-separated levels of concurrent submitters")
    ap.add_argument("--runs-per-level", type=int, default=2000)
    ap.add_argument("--latency", type=int, default=20, help="ms the shop waits per page")
    ap.add_argument("--slots", type=int, default=50,
                    help="the server's max_running_runs (DRAGNET_MAX_RUNNING_RUNS)")
    ap.add_argument("--pool-size", type=int, default=None,
                    help="DRAGNET_DATABASE_POOL_SIZE (default: the server's own, 10)")
    ap.add_argument("--timeout", type=float, default=600,
                    help="seconds to wait for a level's runs to end")
    args = ap.parse_args()
    levels = [int(n) for n in args.submitters.split(",") if n.strip()]
    binary = os.path.abspath(args.binary)
    if not os.access(binary, os.X_OK):
        sys.exit(f"{binary}: not an executable")

    # Ctrl-C and SIGTERM both unwind through the finally below.
    stop = threading.Event()

    def interrupted(signum, frame):
        stop.set()
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGINT, interrupted)

    schema = f"dragnet_rps_{os.getpid()}"
    workdir = tempfile.mkdtemp(prefix="dragnet-rps-")
    procs = Procs(workdir)
    made_schema = False
    results = []
    began = time.monotonic()
    try:
        psql("-c", f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        psql("-c", f"CREATE SCHEMA {schema}")
        made_schema = True
        url = f"{BASE}{'&' if '?' in BASE else '?'}options[search_path]={schema}"
        env = clean_env()
        cli = dict(env, DATABASE_URL=url)

        shop_port = free_port()
        shop = procs.start("shop", [binary, "shop", "--port", str(shop_port)], env)
        procs.wait_http(shop, shop_port, "/orders?per_page=1")
        query = "property_id=3&per_page=100"
        pages, rows = walk_size(shop_port, query)

        subprocess.run([binary, "teams", "create", "acme"], env=cli, cwd=workdir, check=True,
                       capture_output=True)
        token = subprocess.run([binary, "tokens", "create", "--team", "acme"], env=cli,
                               cwd=workdir, check=True, capture_output=True,
                               text=True).stdout.strip()

        port = free_port()
        extra = {"DRAGNET_MAX_RUNNING_RUNS": str(args.slots), "DRAGNET_LOG": "error"}
        if args.pool_size is not None:
            extra["DRAGNET_DATABASE_POOL_SIZE"] = str(args.pool_size)
        serve = procs.start("serve", [binary, "serve", "--bind", f"127.0.0.1:{port}"],
                            dict(cli, **extra))
        procs.wait_http(serve, port, "/readyz")

        here = os.path.dirname(os.path.abspath(__file__))
        shutil.copy(os.path.join(here, "..", "shop", "openapi.yaml"), workdir)
        fault = f'\n    headers:\n      X-Shop-Fault: "latency={args.latency}"' if args.latency else ""
        with open(os.path.join(workdir, "walk.yaml"), "w") as f:
            f.write(f"""name: walk
providers:
  shop:
    openapi: openapi.yaml
    base_url: http://127.0.0.1:{shop_port}{fault}
steps:
  - id: orders
    tool: shop.listOrders
    input: {{ property_id: 3, per_page: 100 }}
    loop:
      all_pages: true
      fields: [id, total]
""")
        pushed = subprocess.run([binary, "workflows", "push", os.path.join(workdir, "walk.yaml")],
                                env=dict(cli, DRAGNET_SERVER=f"http://127.0.0.1:{port}",
                                         DRAGNET_TOKEN=token),
                                cwd=workdir, capture_output=True, text=True)
        if pushed.returncode != 0:
            sys.exit(f"push failed: {pushed.stderr}")

        log(f"dragnet serve: {args.slots} slots, database pool "
            f"{args.pool_size or 'default (10)'}, schema {schema}; shop latency "
            f"{args.latency} ms/page; a run walks {pages} pages ({rows} orders); "
            f"{os.cpu_count()} CPUs; {args.runs_per_level} runs per level")
        for n in levels:
            lv = run_level(port, token, n, args.runs_per_level, args.timeout, stop)
            results.append(lv)
            log(f"{n} submitters: {lv['runs']} runs, {lv['accepted_per_s']} accepted/s, "
                f"{lv['end_to_end_per_s']} end-to-end/s, start p50 {lv['start_p50_ms']} ms "
                f"p99 {lv['start_p99_ms']} ms, {lv['succeeded']} succeeded, "
                f"{lv['failed']} not")
            if serve.poll() is not None:
                sys.exit(f"dragnet serve exited with {serve.returncode}:\n{procs.tail(serve)}")
    except KeyboardInterrupt:
        stop.set()
        log("interrupted; stopping what this script started")
        raise SystemExit(130)
    finally:
        stop.set()
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        procs.stop()
        if made_schema:
            try:
                psql("-c", f"DROP SCHEMA IF EXISTS {schema} CASCADE")
            except subprocess.CalledProcessError as e:
                log(f"could not drop schema {schema}: {e.stderr}")
        shutil.rmtree(workdir, ignore_errors=True)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    table(results)
    log(f"took {time.monotonic() - began:.1f} s")
    print(json.dumps({"levels": [{k: v for k, v in lv.items() if not k.startswith("_")}
                                 for lv in results]}))


if __name__ == "__main__":
    main()
