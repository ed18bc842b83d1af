#!/usr/bin/env bash
# Runs the cargo-fuzz targets in fuzz/ on the nightly toolchain (cargo-fuzz is installed once).
# Not part of CI: fuzzing is open-ended, so it runs by hand for as long as one likes.
#
# Usage: scripts/fuzz.sh [RUNS_PER_TARGET] [SECONDS_PER_TARGET] [TARGET...]
#   defaults: 10,000,000 runs or one hour, whichever comes first; every target.
#   FUZZ_RSS_MB (default 12000) is libFuzzer's memory limit: component_call legally builds
#   layers of hundreds of millions of weights, and its process grows past 10 GB in an hour.
#
# Targets: space_spec (space specs, sampling, value JSON), agent_config (any JSON through
# build_agent on CartPole's spaces), component_call (`rlgraph call`'s spec runner), and
# checkpoint_restore (arbitrary bytes as a checkpoint). Builds keep overflow checks and debug
# assertions on (-a), since a size that wraps is one of the bugs looked for.
#
# The corpus grows under fuzz/corpus/ (ignored). It starts from fuzz/seeds/, the shipped
# configs and the call examples, so it can always be regenerated; a crash is written to
# fuzz/artifacts/TARGET/ and replayed with `cargo +nightly fuzz run TARGET FILE`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
runs="${1:-10000000}"
seconds="${2:-3600}"
shift $(( $# < 2 ? $# : 2 ))
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(space_spec agent_config component_call checkpoint_restore)
cargo +nightly fuzz --version >/dev/null 2>&1 || cargo +nightly install cargo-fuzz --locked
for t in "${targets[@]}"; do
  corpus="fuzz/corpus/$t"
  mkdir -p "$corpus"
  if [ -d "fuzz/seeds/$t" ]; then cp fuzz/seeds/"$t"/* "$corpus/"; fi
  case "$t" in
    agent_config) cp configs/*.json configs/rlgraph/*.json "$corpus/" ;;
    component_call) cp examples/*-call.json "$corpus/" ;;
  esac
  (cd fuzz && cargo +nightly fuzz run -O -a "$t" "corpus/$t" -- \
    -runs="$runs" -max_total_time="$seconds" -rss_limit_mb="${FUZZ_RSS_MB:-12000}" -max_len=8192 -print_final_stats=1)
done
