#!/usr/bin/env bash
# The Python test peers, pinned, in one virtualenv reused across runs:
# schemathesis (fuzzes the HTTP API) and the `mcp` package (an independent
# MCP client for the gateway's tests), and in a second venv an older `mcp`
# (1.9.4, protocol 2025-03-26). Prints the first venv's python.
set -euo pipefail

SCHEMATHESIS_VERSION=4.32.5
MCP_VERSION=2.3.0
VENV="${DRAGNET_PY_VENV:-/tmp/dragnet-ci-venv}"

have() {
  "$VENV/bin/python" - "$@" <<'PY' 2>/dev/null
import importlib.metadata as m, sys
wanted = dict(a.split("==") for a in sys.argv[1:])
sys.exit(0 if all(m.version(k) == v for k, v in wanted.items()) else 1)
PY
}

if ! have "schemathesis==$SCHEMATHESIS_VERSION" "mcp==$MCP_VERSION"; then
  echo "== installing schemathesis $SCHEMATHESIS_VERSION and mcp $MCP_VERSION into $VENV" >&2
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "schemathesis==$SCHEMATHESIS_VERSION" "mcp==$MCP_VERSION" >&2
fi
# The older client (protocol 2025-03-26) needs a venv of its own; pydantic
# is pinned to what that release works with.
VENV1="${DRAGNET_PY_MCP1_VENV:-/tmp/dragnet-ci-venv-mcp1}"
if ! VENV="$VENV1" have "mcp==1.9.4" "pydantic==2.11.7"; then
  echo "== installing mcp 1.9.4 into $VENV1" >&2
  python3 -m venv "$VENV1"
  "$VENV1/bin/pip" install -q "mcp==1.9.4" "pydantic==2.11.7" "pydantic-settings==2.9.1" >&2
fi
echo "$VENV/bin/python"
