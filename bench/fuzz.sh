#!/usr/bin/env bash
# Reruns every fuzz target (cargo-fuzz, nightly), one after the other, each
# for SECONDS_PER_TARGET seconds (default 600), from the seed corpora in
# fuzz/corpus/<target>/. Not run in CI. Needs `cargo install cargo-fuzz`
# and the nightly toolchain. A crash ends that target's run and leaves its
# input in fuzz/artifacts/<target>/; the other targets still run, and the
# script exits non-zero naming the targets that crashed.
#
#   bench/fuzz.sh                 # every target, 10 minutes each
#   bench/fuzz.sh 60              # every target, 1 minute each
#   bench/fuzz.sh 600 refs openapi  # only these targets
set -euo pipefail

cd "$(dirname "$0")/../fuzz"
seconds="${1:-600}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cargo +nightly fuzz list)
fi
# The fuzz package builds in its own target folder (gitignored), never in
# the workspace's.
export CARGO_TARGET_DIR="${FUZZ_TARGET_DIR:-$PWD/target}"

crashed=()
for t in "${targets[@]}"; do
    echo "== $t: ${seconds}s"
    # A scratch corpus so new inputs libFuzzer finds do not pile up in the
    # repository; the seeds are read from fuzz/corpus/<target>/.
    scratch="$CARGO_TARGET_DIR/corpus/$t"
    mkdir -p "$scratch"
    cargo +nightly fuzz run "$t" "$scratch" "corpus/$t" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 ||
        crashed+=("$t")
done
if [ ${#crashed[@]} -gt 0 ]; then
    echo "crashed: ${crashed[*]} (inputs in fuzz/artifacts/)" >&2
    exit 1
fi
echo "no crash in ${#targets[@]} targets"
