#!/usr/bin/env bash
# Side-by-side comparison of dragnet with the tools a user would pick instead,
# whole process against whole process, on this machine. Installs what it
# needs (Debian: nginx-light, jq, gnuplot-nox, time; PyPI in a virtualenv:
# dlt==1.31.0, requests==2.32.3), generates deterministic data, measures
# every job's commands in alternating rounds (bench/compare/alternate.py:
# time, median of RUNS) and with /usr/bin/time (peak RSS, median of 3),
# prints one table of medians and ratios, and writes SVG charts into docs/.
# Not part of CI.
#
#   bash bench/compare/run.sh            # RUNS=10 per command
#   RUNS=3 bash bench/compare/run.sh     # quicker, noisier
#
# Jobs:
#   walk     21 pages x 250 orders from nginx (static files): dragnet call
#            --all-pages vs the fetch-only reqwest floor, dlt's RESTClient
#            paginate and a Python requests loop;
#   shape    filter + project of one 24 MB page (total > 100; id,
#            customer.name, total): dragnet call vs jq -c and a
#            serde_json::Value pipeline;
#   cache    a dragnet run of 6,000 orders (60 pages at 20 ms per page, the
#            demo shop) live (--refresh) vs served from the cache, on SQLite
#            and PostgreSQL;
#   fanout   a dragnet run fanning out over 30 properties x 3 pages at 20 ms
#            per page, loop.for_each.concurrency 1 vs 4;
#   engine   dragnet run of a 1,000-step workflow (999 branches and one
#            request) vs a 1-step one: the whole-process cost per step, run
#            records written included;
#   runs/s   one dragnet serve on PostgreSQL, 10, 50, 100 and 200 submitters
#            (bench/runs_per_second.py): runs accepted and finished per
#            second, submit-to-start p50 and p99;
#   gateway  the gateway's own cost (bench/gateway/run.py, the Python `mcp`
#            client from .ci/python.sh): 1,000 calls through `dragnet mcp
#            --stdio` vs direct, and 100 concurrent callers of a cached
#            `_all_pages` walk over streamable HTTP with tokens (callers:
#            Python threads, then wrk's connections for 5 s); each with its
#            floor: the same upstream behind bench/src/bin/stdio_floor.rs (a
#            hop that only parses and forwards), the same Python threads
#            against bench/src/bin/http_floor.rs (a server that only answers).
#
# It prints the targets first (every one with its measured ratio or figure,
# met or MISSED; also written to $OUT/results/targets.md), then the table
# of medians. The Python-threads row says `client-bound` when those callers
# miss its goal against http_floor alone: then their latency is their own
# and cannot judge dragnet. SKIP="rps gateway" leaves those jobs out.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
RUNS=${RUNS:-10}
OUT=${OUT:-/tmp/dragnet-compare}
VENV=${VENV:-/tmp/dragnet-compare-venv}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
PGURL=${PGURL:-postgres://postgres@127.0.0.1:5432/dragnet_compare}
mkdir -p "$OUT/results"
say() { printf '== %s\n' "$*" >&2; }

# ---- tools ------------------------------------------------------------------
need=()
for pair in nginx:nginx-light jq:jq gnuplot:gnuplot-nox wrk:wrk; do
  command -v "${pair%%:*}" >/dev/null || need+=("${pair#*:}")
done
[ -x /usr/bin/time ] || need+=(time)
if [ ${#need[@]} -gt 0 ]; then
  say "installing ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import dlt, requests' 2>/dev/null; then
  say "virtualenv with dlt and requests"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q dlt==1.31.0 requests==2.32.3
fi
PY=$VENV/bin/python

say "building dragnet and the baselines (release)"
cargo build -q --release -p dragnet -p dragnet-bench --bin dragnet --bin fetch_floor --bin value_pipeline \
  --bin stdio_floor --bin http_floor
BIN=$CARGO_TARGET_DIR/release
DRAGNET=$BIN/dragnet

# ---- data and servers -------------------------------------------------------
DATA=$OUT/data
if [ ! -f "$DATA/big.json" ]; then
  say "generating data"
  python3 bench/compare/gen.py "$DATA" 21 250 64401
fi
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
NGINX_PORT=$(free_port)
sed -e "s|DATA|$DATA|g" -e "s|PORT|$NGINX_PORT|g" bench/compare/nginx.conf > "$OUT/nginx.conf"
"$NGINX" -c "$OUT/nginx.conf" -p "$OUT" &
NGINX_PID=$!
SHOP_PORT=$(free_port)
"$DRAGNET" shop --port "$SHOP_PORT" >/dev/null 2>&1 &
SHOP_PID=$!
cleanup() { kill "$NGINX_PID" "$SHOP_PID" 2>/dev/null || true; }
trap cleanup EXIT
for _ in $(seq 1 50); do
  curl -sf "http://127.0.0.1:$NGINX_PORT/big.json" -o /dev/null -r 0-1 && \
    curl -sf "http://127.0.0.1:$SHOP_PORT/properties" -o /dev/null && break
  sleep 0.2
done
STATIC=http://127.0.0.1:$NGINX_PORT
SHOP=http://127.0.0.1:$SHOP_PORT

# ---- measuring --------------------------------------------------------------
# time_it JOB NAME CMD: queues CMD, with the DATABASE_URL it is given, to be
# timed with the rest of JOB's commands by time_queued.
time_it() {
  python3 -c 'import json, os, sys
job, name, *argv = sys.argv[1:]
env = {"DATABASE_URL": os.environ["DATABASE_URL"]} if "DATABASE_URL" in os.environ else {}
print(json.dumps({"job": job, "name": name, "argv": argv, "env": env}))' "$@" >> "$OUT/queue-$1"
}
# time_queued JOB: JOB's queued commands, one warm-up each, then RUNS
# alternating rounds, into results/JOB--NAME.json (median and spread)
time_queued() {
  python3 bench/compare/alternate.py --runs "$RUNS" --out "$OUT/results" "$OUT/queue-$1" \
    || { echo "failed: timing the job $1" >&2; return 1; }
  rm -f "$OUT/queue-$1"
}
# rss JOB NAME CMD: median peak RSS (KiB) of 3 runs into results/JOB--NAME.rss
rss_it() {
  local job=$1 name=$2; shift 2
  local samples=()
  for _ in 1 2 3; do
    /usr/bin/time -f '%M' -o "$OUT/rss.tmp" "$@" >/dev/null 2>/dev/null || true
    samples+=("$(tail -n 1 "$OUT/rss.tmp")")
  done
  printf '%s\n' "${samples[@]}" | sort -n | sed -n 2p > "$OUT/results/$job--$name.rss"
}
measure() { time_it "$@"; rss_it "$@"; }

rm -f "$OUT"/results/* "$OUT"/queue-*
WALK_BYTES=$(cat "$DATA"/pages/*.json | wc -c)
BIG_BYTES=$(wc -c < "$DATA/big.json")
export PYTHONDONTWRITEBYTECODE=1

say "walk: 21 pages x 250 orders"
WALK=("$DRAGNET" call --spec bench/compare/openapi.yaml --base-url "$STATIC" \
  listOrders --all-pages --max-items 10000 --max-pages 100 --json)
# Every contender must return every row; dragnet must also say so.
"${WALK[@]}" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["_pagingComplete"] and len(d["data"]) == 5250, d["_note"]'
[ "$("$BIN/fetch_floor" "$STATIC" 250 21)" -eq "$WALK_BYTES" ]
[ "$("$PY" bench/compare/walk_dlt.py "$STATIC" 250)" -eq 5250 ]
[ "$("$PY" bench/compare/walk_requests.py "$STATIC" 250)" -eq 5250 ]
measure walk dragnet "${WALK[@]}"
# dragnet's fixed cost in memory: the same call reading one page (~100 KB).
rss_it floor dragnet "$DRAGNET" call --spec bench/compare/openapi.yaml --base-url "$STATIC" listOrders page=1 per_page=250 --json
measure walk fetch-floor "$BIN/fetch_floor" "$STATIC" 250 21
measure walk dlt "$PY" bench/compare/walk_dlt.py "$STATIC" 250
measure walk requests "$PY" bench/compare/walk_requests.py "$STATIC" 250
time_queued walk

say "shape: filter + project of one 24 MB page"
cp "$DATA/big.json" "$OUT/big.json"
SHAPE=("$DRAGNET" call --spec bench/compare/openapi.yaml --base-url "$STATIC" \
  bigPage --fields id,customer.name,total --filter 'total gt 100' --max-items 100000 --max-bytes 100000000)
JQ=(jq -c '.data[] | select(.total > 100) | {id, customer: {name: .customer.name}, total}' "$OUT/big.json")
# The same rows from each (dragnet prints a verdict block after its rows).
want=$("${JQ[@]}" | wc -l)
[ "$("$BIN/value_pipeline" "$OUT/big.json" | wc -l)" -eq "$want" ]
[ "$("${SHAPE[@]}" | grep -c '^{"id"')" -eq "$want" ]
measure shape dragnet "${SHAPE[@]}"
measure shape jq "${JQ[@]}"
measure shape serde-value "$BIN/value_pipeline" "$OUT/big.json"
time_queued shape

say "cache: live vs cached dragnet run, SQLite and PostgreSQL"
WF=(run bench/compare/cache.workflow.yaml --base-url "shop=$SHOP" --max-items 10000 --max-pages 100 --max-requests 200)
if pg_isready -q -h 127.0.0.1 -p 5432; then
  psql -q -h 127.0.0.1 -U postgres -tc "select 1 from pg_database where datname='dragnet_compare'" | grep -q 1 \
    || psql -q -h 127.0.0.1 -U postgres -c "create database dragnet_compare" >/dev/null
  BACKENDS="sqlite postgres"
else
  say "PostgreSQL is not answering on 127.0.0.1:5432: the cache job runs on SQLite only"
  BACKENDS="sqlite"
fi
for backend in $BACKENDS; do
  case $backend in
    sqlite) url="sqlite://$OUT/compare.db"; rm -f "$OUT"/compare.db* ;;
    postgres) url=$PGURL ;;
  esac
  DATABASE_URL=$url "$DRAGNET" "${WF[@]}" --refresh >/dev/null 2>&1
  DATABASE_URL=$url time_it cache "$backend-live" "$DRAGNET" "${WF[@]}" --refresh
  DATABASE_URL=$url time_it cache "$backend-cached" "$DRAGNET" "${WF[@]}"
  time_queued cache
done

say "fan-out: 30 values x 3 pages at 20 ms, sequential vs concurrency 4"
sed 's/concurrency: 1 }/concurrency: 4 }/' bench/compare/fanout.workflow.yaml > bench/compare/.fanout-4.workflow.yaml
rm -f "$OUT"/fanout.db*
for c in 1 4; do
  file=bench/compare/fanout.workflow.yaml
  [ "$c" = 4 ] && file=bench/compare/.fanout-4.workflow.yaml
  DATABASE_URL="sqlite://$OUT/fanout.db" time_it fanout "concurrency-$c" "$DRAGNET" run "$file" \
    --base-url "shop=$SHOP" --max-requests 200 --max-items 10000
done
time_queued fanout
rm -f bench/compare/.fanout-4.workflow.yaml

say "engine: a 1,000-step workflow vs a 1-step one"
python3 - "$OUT" "$SHOP" "$ROOT" <<'EOF'
import sys
out, shop, root = sys.argv[1:4]
# A chain of branches gating each other, ending in one request to the shop
# (the same request in both files, so it cancels out of the difference).
for n in (1, 1000):
    lines = ["name: chain-%d" % n, "inputs:", "  go: { type: boolean, default: true }",
             "providers:", "  shop:", "    openapi: %s/shop/openapi.yaml" % root,
             "    base_url: %s" % shop, "steps:"]
    for i in range(1, n):
        lines += ["  - id: s%d" % i, "    type: branch", '    if: { ref: "$.inputs.go" }',
                  "    then: [s%d]" % (i + 1)]
    lines += ["  - id: s%d" % n, "    tool: shop.listProperties"]
    open("%s/chain-%d.workflow.yaml" % (out, n), "w").write("\n".join(lines) + "\n")
EOF
rm -f "$OUT"/engine.db*
DATABASE_URL="sqlite://$OUT/engine.db" time_it engine steps-1 "$DRAGNET" run "$OUT/chain-1.workflow.yaml"
DATABASE_URL="sqlite://$OUT/engine.db" time_it engine steps-1000 "$DRAGNET" run "$OUT/chain-1000.workflow.yaml" --concurrency 1
time_queued engine

case " ${SKIP:-} " in *" rps "*) ;; *)
  if pg_isready -q -h 127.0.0.1 -p 5432; then
    say "runs per second: one dragnet serve on PostgreSQL, 10 to 200 submitters"
    python3 bench/runs_per_second.py "$DRAGNET" --submitters 10,50,100,200 \
      --runs-per-level "${RPS_RUNS:-2000}" > "$OUT/results/rps.json"
  else
    say "PostgreSQL is not answering on 127.0.0.1:5432: no runs-per-second job"
  fi ;;
esac
case " ${SKIP:-} " in *" gateway "*) ;; *)
  say "the gateway's own cost: stdio pass-through and cached walks over HTTP"
  MCP_PY=$(bash .ci/python.sh)
  # Each part also measures its floor: the same upstream behind a hop that
  # only parses and forwards (stdio), the same callers against a server
  # that only answers (HTTP). Five stdio rounds: single rounds of one
  # variant spread by up to 20% on two cores.
  "$MCP_PY" bench/gateway/run.py "$DRAGNET" --rounds 5 --floor "$BIN/stdio_floor" \
    --floor-http "$BIN/http_floor" > "$OUT/results/gateway.json"
  # The same cached walk with wrk's connections as the callers: the
  # Python callers above spend about as much CPU as the gateway itself on
  # the same two cores, so their latencies are partly their own.
  "$MCP_PY" bench/gateway/run.py "$DRAGNET" --only http --http-client wrk > "$OUT/results/gateway-wrk.json" ;;
esac

# ---- the table and the charts -----------------------------------------------
python3 bench/compare/report.py "$OUT/results" "$WALK_BYTES" "$BIG_BYTES" "$ROOT/docs"
