#!/usr/bin/env python3
"""Reads the results of run.sh (timing JSON in hyperfine's layout, peak-RSS files and
the JSON lines of bench/runs_per_second.py and bench/gateway/run.py),
prints the targets table (every target, its measured ratio or figure, met
or missed), then one table of medians and ratios, and writes SVG charts
with gnuplot.

usage: report.py RESULTS_DIR WALK_BYTES BIG_BYTES DOCS_DIR
"""
import glob
import json
import os
import statistics
import subprocess
import sys

results, walk_bytes, big_bytes, docs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
INPUT = {"walk": walk_bytes, "shape": big_bytes}


def floor_rss():
    path = os.path.join(results, "floor--dragnet.rss")
    return int(open(path).read().strip()) * 1024 if os.path.exists(path) else None


def load():
    out = {}
    for path in sorted(glob.glob(os.path.join(results, "*--*.json"))):
        job, name = os.path.basename(path)[:-5].split("--", 1)
        r = json.load(open(path))["results"][0]
        times = r["times"]
        rss_path = path[:-5] + ".rss"
        rss = int(open(rss_path).read().strip()) * 1024 if os.path.exists(rss_path) else None
        out.setdefault(job, {})[name] = {
            "median": statistics.median(times),
            "min": min(times),
            "max": max(times),
            "runs": len(times),
            "rss": rss,
        }
    return out


def fmt_s(s):
    return "%.3f s" % s if s >= 0.1 else "%.1f ms" % (s * 1000)


data = load()
rows = []
for job in ("walk", "shape"):
    entries = data.get(job, {})
    base = entries.get("dragnet")
    for name, e in entries.items():
        ratio = e["median"] / base["median"] if base else float("nan")
        mem = "%.1f MB" % (e["rss"] / 1e6) if e["rss"] else "-"
        per_input = "%.2fx" % (e["rss"] / INPUT[job]) if e["rss"] else "-"
        rows.append((job, name, fmt_s(e["median"]), "%s-%s" % (fmt_s(e["min"]), fmt_s(e["max"])),
                     "%.2fx" % ratio, mem, per_input))
cache = data.get("cache", {})
for backend in ("sqlite", "postgres"):
    live, hit = cache.get(backend + "-live"), cache.get(backend + "-cached")
    if live and hit:
        for name, e in ((backend + "-live", live), (backend + "-cached", hit)):
            rows.append(("cache", name, fmt_s(e["median"]), "%s-%s" % (fmt_s(e["min"]), fmt_s(e["max"])),
                         "%.1fx" % (live["median"] / e["median"]), "-", "-"))
fan = data.get("fanout", {})
if "concurrency-1" in fan and "concurrency-4" in fan:
    one = fan["concurrency-1"]["median"]
    for name in ("concurrency-1", "concurrency-4"):
        e = fan[name]
        rows.append(("fanout", name, fmt_s(e["median"]), "%s-%s" % (fmt_s(e["min"]), fmt_s(e["max"])),
                     "%.2fx" % (one / e["median"]), "-", "-"))
engine = data.get("engine", {})
if "steps-1" in engine and "steps-1000" in engine:
    per_step = (engine["steps-1000"]["median"] - engine["steps-1"]["median"]) / 999
    rows.append(("engine", "per step", "%.1f us" % (per_step * 1e6), "-", "-", "-", "-"))

# ---- the targets ------------------------------------------------------------
def last_json(name):
    path = os.path.join(results, name)
    if not os.path.exists(path):
        return None
    lines = [l for l in open(path).read().splitlines() if l.strip()]
    try:
        return json.loads(lines[-1]) if lines else None
    except ValueError:
        return None


def median_of(job, name):
    e = data.get(job, {}).get(name)
    return e["median"] if e else None


targets = []  # (id, target, goal, measured, met, reproduce)


def target(tid, what, goal, measured, met, how, verdict=None):
    verdict = verdict or ("-" if met is None else ("met" if met else "MISSED"))
    targets.append((tid, what, goal, measured, verdict, how))


shape = data.get("shape", {}).get("dragnet")
if shape and shape["rss"]:
    per_input = shape["rss"] / big_bytes
    target("P2", "filter + project of a 24 MB page: peak RSS / input", "<= 1.30x",
           "%.2fx (%.1f MB)" % (per_input, shape["rss"] / 1e6), per_input <= 1.30,
           "bash bench/compare/run.sh (job shape)")
jq, dn = median_of("shape", "jq"), median_of("shape", "dragnet")
if jq and dn:
    target("P2", "filter + project: jq's time / dragnet's", ">= 10x", "%.1fx" % (jq / dn),
           jq / dn >= 10, "bash bench/compare/run.sh (job shape)")
for backend, tid in (("postgres", "P3"), ("sqlite", "P3")):
    live, hit = median_of("cache", backend + "-live"), median_of("cache", backend + "-cached")
    if live and hit:
        target(tid, "cached dragnet run vs live walk, %s" % backend, ">= 50x",
               "%.1fx (%s vs %s)" % (live / hit, fmt_s(hit), fmt_s(live)), live / hit >= 50,
               "bash bench/compare/run.sh (job cache)")
one, thousand = median_of("engine", "steps-1"), median_of("engine", "steps-1000")
if one and thousand:
    per_step = (thousand - one) / 999
    target("P4", "engine: whole-process cost per step", "<= 20 us", "%.1f us" % (per_step * 1e6),
           per_step <= 20e-6, "bash bench/compare/run.sh (job engine)")
rps = last_json("rps.json")
if rps:
    for level in rps["levels"]:
        ok = level["end_to_end_per_s"] >= 150 and level["failed"] == 0
        target("P8", "runs/s end to end, %d submitters (start p50 %.0f ms, p99 %.0f ms; accepted %.0f/s)"
               % (level["submitters"], level["start_p50_ms"], level["start_p99_ms"], level["accepted_per_s"]),
               ">= 150/s", "%.1f/s" % level["end_to_end_per_s"], ok,
               "python3 bench/runs_per_second.py BINARY")
gw = last_json("gateway.json")
if gw and "stdio" in gw:
    r = gw["stdio"]["ratio"]
    own = gw["stdio"].get("gateway_server_cpu_ms_per_call")
    label = "1,000 calls through dragnet mcp --stdio / direct"
    if own is not None:
        label += " (%.3f ms of dragnet's own CPU a call)" % own
    floor = gw["stdio"].get("floor_ratio")
    if floor is not None:
        label += "; a hop that only parses and forwards: %.2fx" % floor
    target("P9", label, "<= 1.15x", "%.2fx" % r, r <= 1.15,
           "$PY bench/gateway/run.py BINARY --floor target/release/stdio_floor")
if gw and "http" in gw:
    h = gw["http"]
    label = "%d callers (Python threads) of a cached _all_pages over HTTP with tokens: p99 (%.0f calls/s)" % (
        h["callers"], h["per_s"])
    # When these callers miss the goal against a server that only answers
    # (every answer right), their p99 is their own: the row cannot judge
    # the gateway.
    floor = h.get("floor")
    bound = None
    if floor and floor.get("p99_ms") is not None:
        label += "; the same callers against a server that only answers: p99 %.1f ms" % floor["p99_ms"]
        if floor["p99_ms"] > 50 and floor.get("problems") == 0:
            bound = "client-bound"
    target("P9", label, "<= 50 ms", "%.1f ms" % h["p99_ms"], h["p99_ms"] <= 50,
           "$PY bench/gateway/run.py BINARY --floor-http target/release/http_floor", bound)
wrk = last_json("gateway-wrk.json")
if wrk and wrk.get("http"):
    h = wrk["http"]
    ok = h["p99_ms"] <= 50 and h["problems"] == 0
    target("P9", "the same, %d callers as wrk connections: p99 (%.0f calls/s, p50 %.1f ms, %.2f ms gateway CPU a call)"
           % (h["callers"], h["per_s"], h["p50_ms"], h["gateway_cpu_ms_per_call"]), "<= 50 ms",
           "%.1f ms" % h["p99_ms"], ok, "$PY bench/gateway/run.py BINARY --only http --http-client wrk")
walk_req, walk_dn = median_of("walk", "requests"), median_of("walk", "dragnet")
if walk_req and walk_dn:
    target("kept", "walk of 21 pages: requests loop's time / dragnet's", "> 1x",
           "%.1fx" % (walk_req / walk_dn), walk_req > walk_dn, "bash bench/compare/run.sh (job walk)")
c1, c4 = median_of("fanout", "concurrency-1"), median_of("fanout", "concurrency-4")
if c1 and c4:
    target("kept", "fan-out: concurrency 4 vs 1", ">= 3.5x", "%.2fx" % (c1 / c4), c1 / c4 >= 3.5,
           "bash bench/compare/run.sh (job fanout)")

if targets:
    thead = ("id", "target", "goal", "measured", "verdict")
    tw = [max(len(str(r[i])) for r in targets + [thead]) for i in range(len(thead))]
    tline = lambda r: "  ".join(str(c).ljust(w) for c, w in zip(r, tw))
    print("TARGETS")
    print(tline(thead))
    print(tline(["-" * w for w in tw]))
    for t in targets:
        print(tline(t[:5]))
    print()
    with open(os.path.join(results, "targets.md"), "w") as f:
        f.write("| id | target | goal | measured | verdict | reproduce |\n|---|---|---|---|---|---|\n")
        for t in targets:
            f.write("| %s | %s | %s | %s | %s | `%s` |\n" % t)

head = ("job", "contender", "median", "range", "ratio", "peak RSS", "RSS/input")
widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
line = lambda r: "  ".join(str(c).ljust(w) for c, w in zip(r, widths))
print(line(head))
print(line(["-" * w for w in widths]))
for r in rows:
    print(line(r))
print()
print("ratio: walk and shape = median / dragnet's median (above 1: slower than dragnet);"
      " cache = live median / this median (the speed-up of a hit);"
      " fanout = sequential median / this median.")
print("RSS/input: peak resident memory over the raw bytes the job reads"
      " (walk: %d bytes of pages, shape: %d bytes)." % (walk_bytes, big_bytes))
floor = floor_rss()
if floor:
    print("dragnet's fixed RSS (the same call reading one ~100 KB page): %.1f MB" % (floor / 1e6))
    for job in ("walk", "shape"):
        e = data.get(job, {}).get("dragnet")
        if e and e["rss"]:
            above = e["rss"] - floor
            print("  %s: %.1f MB above it = %.2fx the input" % (job, above / 1e6, above / INPUT[job]))

# Charts: one bar chart of medians per job.
os.makedirs(docs, exist_ok=True)
for job, title in (("walk", "Walk of 21 pages x 250 orders (median seconds)"),
                   ("shape", "Filter + project of a 24 MB page (median seconds)"),
                   ("cache", "dragnet run, 6,000 orders at 20 ms/page (median seconds)")):
    entries = data.get(job, {})
    if not entries:
        continue
    dat = os.path.join(results, job + ".dat")
    with open(dat, "w") as f:
        for name, e in entries.items():
            f.write('"%s" %f\n' % (name, e["median"]))
    svg = os.path.join(docs, "compare-%s.svg" % job)
    script = """
set terminal svg size 640,360 font 'sans,11'
set output '%s'
set title '%s'
set style data histograms
set style fill solid 0.8 border -1
set boxwidth 0.7
set logscale y
set grid ytics
set yrange [*:*]
unset key
plot '%s' using 2:xtic(1) linecolor rgb '#3b6ea5'
""" % (svg, title, dat)
    subprocess.run(["gnuplot"], input=script.encode(), check=True)
    print("chart:", os.path.relpath(svg))
