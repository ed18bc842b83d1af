#!/usr/bin/env bash
# The chaos soak's ten-minute form: distributed Ape-X on loopback (a learner, two replay
# shards, two actors) while a random role is killed with SIGKILL every 20 to 40 s and started
# again with --resume-if-present; it checks that the run learns, that every role resumed
# from what its predecessor saved, that no file is torn and that the counts add up (see
# rlgraph-cli/tests/integration/chaos_soak.rs). The test command runs its one-minute form.
#
#   scripts/chaos-soak.sh [SECONDS] [KILL_EVERY]       (defaults: 600 and 20-40)
#
# The report (kills, what each role resumed from, frames, returns, counts) is printed and
# written to target/chaos-soak.json. RLGRAPH_SOAK_SEED picks other kills.
set -euo pipefail
cd "$(dirname "$0")/.."
export RLGRAPH_SOAK_SECS="${1:-600}" RLGRAPH_SOAK_KILL_SECS="${2:-20-40}"
# Frames enough to outlast the soak on two cores (about 16,000/s with kills here; a run of
# 9M frames ended at 8 min): the run ends itself after the last kill.
export RLGRAPH_SOAK_FRAMES="${RLGRAPH_SOAK_FRAMES:-$(( RLGRAPH_SOAK_SECS * 20000 ))}"
export RLGRAPH_SOAK_REPORT="${RLGRAPH_SOAK_REPORT:-$PWD/target/chaos-soak.json}"
cargo test --locked -p rlgraph-cli --test integration -- chaos_soak --nocapture
echo "report: $RLGRAPH_SOAK_REPORT"
