#!/usr/bin/env python3
"""The scale-out load benchmark (issue 11; not a test, never asserted).

200 runs of a walking workflow submitted at once to an API-only
`dragnet serve` on one PostgreSQL database, executed by 1 and then by 3
`dragnet worker` processes (each with the same number of slots), against
the demo shop in its own process. Reported per configuration: the wall
time from the first submission to the last run's end, runs per second,
the peak resident memory of each worker (VmHWM), and the raw bytes of
the pages the runs walked (one walk's pages, measured, times the runs). Both configurations run in
this one script, on the same machine, one after the other, so their ratio
is what to read.

Usage: bench/scale_out.py BINARY [--runs 200] [--slots 50] [--latency 20]
Needs psql and PostgreSQL at DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres).
"""

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

BASE = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")


def psql(schema, sql):
    env = dict(os.environ, PGOPTIONS=f"-c search_path={schema}")
    out = subprocess.run(["psql", BASE, "-At", "-c", sql], env=env, check=True,
                         capture_output=True, text=True)
    return out.stdout.strip()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def peak_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class Cluster:
    def __init__(self, binary, schema, workers, slots, env):
        self.url = f"{BASE}{'&' if '?' in BASE else '?'}options[search_path]={schema}"
        self.env = dict(env, DATABASE_URL=self.url, DRAGNET_LOG="error")
        self.binary = binary
        self.procs = []
        self.port = free_port()
        serve = self.start(["serve", "--bind", f"127.0.0.1:{self.port}"],
                           {"DRAGNET_MAX_RUNNING_RUNS": "0"})
        self.serve = serve
        self.workers = [self.start(["worker"], {"DRAGNET_MAX_RUNNING_RUNS": str(slots)})
                        for _ in range(workers)]

    def start(self, args, extra):
        p = subprocess.Popen([self.binary, *args], env=dict(self.env, **extra),
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        p.stdout.readline()
        self.procs.append(p)
        return p

    def stop(self):
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()


def run_config(args, workers, shop_url, workdir):
    schema = f"dragnet_bench_{workers}w_{os.getpid()}"
    subprocess.run(["psql", BASE, "-q", "-c", f"DROP SCHEMA IF EXISTS {schema} CASCADE"],
                   check=True, capture_output=True)
    subprocess.run(["psql", BASE, "-q", "-c", f"CREATE SCHEMA {schema}"], check=True,
                   capture_output=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DRAGNET_")}
    url = f"{BASE}{'&' if '?' in BASE else '?'}options[search_path]={schema}"
    cli = dict(env, DATABASE_URL=url)
    subprocess.run([args.binary, "teams", "create", "acme"], env=cli, check=True,
                   capture_output=True)
    token = subprocess.run([args.binary, "tokens", "create", "--team", "acme"], env=cli,
                           check=True, capture_output=True, text=True).stdout.strip()
    cluster = Cluster(args.binary, schema, workers, args.slots, env)
    try:
        server = f"http://127.0.0.1:{cluster.port}"
        pushed = subprocess.run([args.binary, "workflows", "push",
                                 os.path.join(workdir, "walk.yaml")],
                                env=dict(cli, DRAGNET_SERVER=server, DRAGNET_TOKEN=token),
                                capture_output=True, text=True)
        if pushed.returncode != 0:
            sys.exit(f"push failed: {pushed.stderr}")
        idle = [rss_kib(w.pid) for w in cluster.workers]
        started = time.monotonic()

        def submit(_):
            req = urllib.request.Request(f"{server}/v1/workflows/walk/runs", method="POST",
                                         data=b"{}", headers={
                                             "Authorization": f"Bearer {token}",
                                             "Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=120) as r:
                r.read()

        threads = [threading.Thread(target=submit, args=(i,)) for i in range(args.runs)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        submitted = time.monotonic() - started
        while True:
            left = int(psql(schema, "SELECT COUNT(*) FROM runs WHERE status IN ('queued', 'running')"))
            if left == 0:
                break
            time.sleep(0.05)
        elapsed = time.monotonic() - started
        statuses = psql(schema, "SELECT status || ':' || COUNT(*) FROM runs GROUP BY status")
        rows = psql(schema, "SELECT COALESCE(SUM((verdict::json->>'itemCount')::bigint), 0) "
                            "FROM run_steps WHERE id = 'orders'")
        peaks = [peak_kib(w.pid) for w in cluster.workers]
        per_worker = psql(schema, "SELECT COUNT(*) FROM runs GROUP BY lease_owner ORDER BY 1")
        one_walk = walk_bytes(shop_url)
        served = one_walk * args.runs
        return {
            "workers": workers,
            "slots_per_worker": args.slots,
            "runs": args.runs,
            "statuses": statuses.replace("\n", " "),
            "rows": int(rows or 0),
            "submit_s": round(submitted, 2),
            "elapsed_s": round(elapsed, 2),
            "runs_per_s": round(args.runs / elapsed, 2),
            "idle_rss_mib": [round(k / 1024, 1) for k in idle],
            "peak_rss_mib": [round(k / 1024, 1) for k in peaks],
            "runs_per_worker": [int(n) for n in per_worker.split()],
            "raw_bytes_mib": round(served / 2**20, 1),
            # What each worker held at most at once: a walk's pages per slot in use.
            "in_flight_mib": [round(min(args.slots, int(n)) * one_walk / 2**20, 1)
                              for n in per_worker.split()],
        }
    finally:
        cluster.stop()
        subprocess.run(["psql", BASE, "-q", "-c", f"DROP SCHEMA IF EXISTS {schema} CASCADE"],
                       capture_output=True)


def walk_bytes(shop_url):
    """The raw bytes of one run's walk: every page of the collection."""
    total, page = 0, 1
    while True:
        with urllib.request.urlopen(
                f"{shop_url}/orders?status=open&per_page=100&page={page}", timeout=30) as r:
            body = r.read()
        total += len(body)
        doc = json.loads(body)
        if not doc["data"] or page * 100 >= doc["meta"]["total"]:
            return total
        page += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--slots", type=int, default=50)
    ap.add_argument("--latency", type=int, default=20)
    args = ap.parse_args()
    workdir = tempfile.mkdtemp(prefix="dragnet-bench-")
    port = free_port()
    shop = subprocess.Popen([args.binary, "shop", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={k: v for k, v in os.environ.items() if not k.startswith("DRAGNET_")})
    shop.stderr.readline()  # "demo shop listening on …"
    shop_url = f"http://127.0.0.1:{port}"
    here = os.path.dirname(os.path.abspath(__file__))
    shutil.copy(os.path.join(here, "..", "shop", "openapi.yaml"), workdir)
    with open(os.path.join(workdir, "walk.yaml"), "w") as f:
        f.write(f"""name: walk
providers:
  shop:
    openapi: openapi.yaml
    base_url: {shop_url}
    headers:
      X-Shop-Fault: "latency={args.latency}"
steps:
  - id: orders
    tool: shop.listOrders
    input: {{ status: open, per_page: 100 }}
    loop:
      all_pages: true
      fields: [id, total]
""")
    try:
        results = [run_config(args, n, shop_url, workdir) for n in (1, 3)]
    finally:
        shop.terminate()
        shop.wait()
        shutil.rmtree(workdir, ignore_errors=True)
    for r in results:
        print(json.dumps(r))
    one, three = results
    def worst(r):
        # Each worker's peak over the raw bytes it had in flight at most.
        peaks = sorted(r["peak_rss_mib"], reverse=True)
        flights = sorted(r["in_flight_mib"], reverse=True)
        return round(max(p / max(f, 0.1) for p, f in zip(peaks, flights)), 2)

    print(json.dumps({
        "latency_ms": args.latency,
        "throughput_ratio_3_over_1": round(three["runs_per_s"] / one["runs_per_s"], 2),
        "peak_over_in_flight_1": worst(one),
        "peak_over_in_flight_3": worst(three),
    }))


if __name__ == "__main__":
    main()
