#!/usr/bin/env bash
# The Node.js peers the tests start, from the npm registry, pinned, installed
# once per machine into a cache folder outside the repository:
# - @modelcontextprotocol/server-everything and server-filesystem: real MCP
#   servers used as upstreams (images, audio, resource links, structured
#   content, progress; file reads);
# - oidc-provider: a real OAuth 2.1 authorization server that issues RS256
#   JWT access tokens for a resource (the client-credentials grant with
#   resource indicators);
# - @modelcontextprotocol/inspector-cli: the MCP Inspector's command line,
#   an independent client the gateway is driven by over stdio and HTTP.
# Prints the `node_modules` folder; `.ci/test` exports it as
# DRAGNET_NODE_MODULES. The install is atomic, as in .ci/corpus.sh: made in
# a temporary folder beside the cache and renamed into place with a marker.
set -euo pipefail

PACKAGES=(
  "@modelcontextprotocol/server-everything@2026.8.31"
  "@modelcontextprotocol/server-filesystem@2026.8.31"
  "oidc-provider@9.13.3"
  "@modelcontextprotocol/inspector-cli@1.0.3"
)
# The folder's name changes with the pins, so a new pin installs afresh.
TAG="$(printf '%s\n' "${PACKAGES[@]}" | sha256sum | cut -c1-12)"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/dragnet"
DEST="$CACHE/node-peers-$TAG"
MARKER="$DEST/.installed"

if [ ! -f "$MARKER" ]; then
  echo "== installing ${PACKAGES[*]} into $DEST" >&2
  mkdir -p "$CACHE"
  WORK="$(mktemp -d "$CACHE/.node-peers.XXXXXX")"
  trap 'rm -rf "$WORK"' EXIT
  (
    cd "$WORK"
    echo '{"name": "dragnet-test-peers", "private": true}' >package.json
    npm install --silent --no-audit --no-fund --save-exact "${PACKAGES[@]}" >&2
  )
  for entry in @modelcontextprotocol/server-everything/dist/index.js \
    @modelcontextprotocol/server-filesystem/dist/index.js oidc-provider/package.json \
    @modelcontextprotocol/inspector-cli/build/index.js; do
    if [ ! -f "$WORK/node_modules/$entry" ]; then
      echo "error: the install lacks node_modules/$entry" >&2
      exit 1
    fi
  done
  printf '%s\n' "${PACKAGES[@]}" >"$WORK/.installed"
  if [ ! -f "$MARKER" ]; then
    rm -rf "$DEST"
    mv -T "$WORK" "$DEST" 2>/dev/null || [ -f "$MARKER" ] || {
      echo "error: cannot move the Node.js peers into $DEST" >&2
      exit 1
    }
  fi
fi
echo "$DEST/node_modules"
