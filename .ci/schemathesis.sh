#!/usr/bin/env bash
# Fuzzes the HTTP API with schemathesis against its own OpenAPI document
# (GET /v1/openapi.json): a real `dragnet serve` on a fresh SQLite store, a
# team and token, one workflow pushed over the demo shop so runs really
# happen. Passes when no answer is a 5xx and every answer matches the
# document (status code, content type, headers, body schema).
#
# Uses: target/debug/dragnet (built before), and the pinned venv of
# .ci/python.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN="${CARGO_TARGET_DIR:-target}/debug/dragnet"
MAX_EXAMPLES="${SCHEMATHESIS_MAX_EXAMPLES:-100}"
# The pinned venv (.ci/python.sh installs it when missing).
VENV="$(dirname "$(dirname "$(bash .ci/python.sh)")")"

WORK="$(mktemp -d)"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

export DRAGNET_DATABASE_URL="sqlite://$WORK/dragnet.db"
export DRAGNET_LOG=error

# The address a background process prints on its first line: "… http://ADDR …".
address_of() {
  local log="$1"
  for _ in $(seq 1 100); do
    if grep -qo 'http://[0-9.:]*' "$log" 2>/dev/null; then
      grep -o 'http://[0-9.:]*' "$log" | head -n 1
      return 0
    fi
    sleep 0.1
  done
  echo "error: no address in $log:" >&2
  cat "$log" >&2
  return 1
}

"$BIN" shop --port 0 >"$WORK/shop.log" 2>&1 &
PIDS+=($!)
SHOP="$(address_of "$WORK/shop.log")"

"$BIN" teams create fuzz >/dev/null
TOKEN="$("$BIN" tokens create --team fuzz 2>/dev/null)"

"$BIN" serve --bind 127.0.0.1:0 >"$WORK/serve.log" 2>&1 &
PIDS+=($!)
API="$(address_of "$WORK/serve.log")"

sed "s#http://127.0.0.1:8080#$SHOP#" shop/nightly-open-orders.workflow.yaml >"$WORK/nightly.yaml"
python3 - "$WORK/nightly.yaml" shop/openapi.yaml >"$WORK/bundle.json" <<'PY'
import json, sys
print(json.dumps({"workflow": open(sys.argv[1]).read(),
                  "documents": {"openapi.yaml": open(sys.argv[2]).read()}}))
PY
curl -fsS -X PUT -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' \
  --data-binary @"$WORK/bundle.json" "$API/v1/workflows/nightly-open-orders" >/dev/null
curl -fsS -X POST -H "Authorization: Bearer $TOKEN" "$API/v1/workflows/nightly-open-orders/runs" >/dev/null

echo "== schemathesis against $API/v1/openapi.json ($MAX_EXAMPLES examples per operation)"
# One worker: with two, hypothesis builds strategies on two threads at once
# and CPython 3.11's ast.parse can fail between them ("AST constructor
# recursion depth mismatch", python/cpython#106905), stopping a green run
# with a runtime error (seen 2026-12-03 on a loaded machine).
"$VENV/bin/st" run "$API/v1/openapi.json" \
  --header "Authorization: Bearer $TOKEN" \
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance \
  --max-examples "$MAX_EXAMPLES" \
  --seed "${SCHEMATHESIS_SEED:-1}" \
  --workers 1 \
  --request-timeout 30 \
  --generation-database none \
  --report-dir "$WORK/report"
