#!/usr/bin/env bash
# Chromium and its WebDriver for the web UI's browser test
# (api/tests/ui_browser.rs), from Debian, pinned; installed once per
# machine (skipped when chromedriver is already on PATH). Debian's security
# archive replaces a version when it ships the next one: when the pinned
# version is no longer offered, the archive's current one is taken.
set -euo pipefail
CHROMIUM_VERSION="156.0.8078.114-1~deb12u1"
if command -v chromedriver >/dev/null 2>&1 && command -v chromium >/dev/null 2>&1; then
  exit 0
fi
echo "== installing chromium and chromium-driver ($CHROMIUM_VERSION) from Debian" >&2
export DEBIAN_FRONTEND=noninteractive
if ! apt-cache show "chromium=$CHROMIUM_VERSION" >/dev/null 2>&1; then
  apt-get update -q >/dev/null
fi
apt-get install -y -q "chromium=$CHROMIUM_VERSION" "chromium-driver=$CHROMIUM_VERSION" >/dev/null \
  || { echo "   (pinned version not offered; installing the archive's current one)" >&2
       apt-get install -y -q chromium chromium-driver >/dev/null; }
