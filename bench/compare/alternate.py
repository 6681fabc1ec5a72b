#!/usr/bin/env python3
"""Times the commands of one job in alternating rounds, whole process each.

    alternate.py --runs N --out DIR QUEUE

QUEUE holds one JSON object a line, {"job", "name", "argv", "env"}, as
run.sh's `time_it` wrote it; every command in it is run once as a
warm-up, then N rounds of one run each, the round's order reversed every
other round (A B C, C B A, ...). Each command's wall times (from just
before it is started to its exit, stdout and stderr to /dev/null) go to
DIR/JOB--NAME.json in hyperfine's layout ({"results": [{"times": ...}]}),
which report.py reads.

Why not hyperfine's own runs: hyperfine runs every run of one command,
then every run of the next. On a shared two-core machine a slow spell
of a second or two then lands on one command's runs only and moves the
ratio of the two (in one sitting the cached PostgreSQL run's median rose
from 24 to 34 ms while the live runs, timed before it, did not move).
Alternating spreads any such spell over every command of the job, so a
ratio of two of them is taken from runs made side by side.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def load(queue):
    entries = []
    with open(queue) as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                try:
                    entries.append(json.loads(line))
                except json.JSONDecodeError as e:
                    sys.exit("%s:%d: not a JSON line: %s" % (queue, n, e))
    if not entries:
        sys.exit("%s: no command to time" % queue)
    return entries


def once(entry):
    """The wall time of one run of `entry`, in seconds; exits on failure."""
    env = dict(os.environ, **entry.get("env", {}))
    started = time.perf_counter()
    try:
        code = subprocess.call(
            entry["argv"], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
    except OSError as e:
        sys.exit("cannot start %s: %s" % (entry["argv"][0], e))
    took = time.perf_counter() - started
    if code != 0:
        sys.exit("failed (exit %d): %s" % (code, " ".join(entry["argv"])))
    return took


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--out", required=True)
    ap.add_argument("queue")
    args = ap.parse_args()
    entries = load(args.queue)
    times = [[] for _ in entries]
    for entry in entries:
        once(entry)
    order = list(range(len(entries)))
    for r in range(args.runs):
        for i in order if r % 2 == 0 else reversed(order):
            times[i].append(once(entries[i]))
    for entry, ts in zip(entries, times):
        result = {
            "command": entry["name"],
            "times": ts,
            "median": statistics.median(ts),
            "mean": statistics.fmean(ts),
            "min": min(ts),
            "max": max(ts),
        }
        path = os.path.join(args.out, "%s--%s.json" % (entry["job"], entry["name"]))
        with open(path, "w") as f:
            json.dump({"results": [result]}, f)


if __name__ == "__main__":
    main()
