#!/usr/bin/env bash
# Ape-X environment frames/s on loopback with 1, 2 and 4 actor processes (one replay shard,
# one learner), against single-process Ape-X with the same config and frames in the same
# run. Each process is one thread, so a run of P processes can use min(P, cores) cores; the
# last column divides frames/s by the cores a run can use, against the single process's.
#
#   scripts/bench-distributed.sh [FRAMES] [CONFIG]
set -euo pipefail
cd "$(dirname "$0")/.."
frames=${1:-20000}
config=${2:-configs/apex-cartpole.json}
cores=$(nproc)
cargo build --release -q -p rlgraph-cli
bin=target/release/rlgraph
fps() { python3 -c 'import json,sys; print(json.load(sys.stdin)["env_frames_per_second"])'; }

single=$("$bin" train "$config" --env CartPole-v1 --timesteps "$frames" --seed 1 2>/dev/null | fps)
printf '%-22s %12s %10s %14s\n' run frames/s cores per-core-ratio
printf '%-22s %12.0f %10d %14.2f\n' single-process "$single" 1 1.00
for actors in 1 2 4; do
  out=$("$bin" launch "$config" --env CartPole-v1 --actors "$actors" --replay-shards 1 \
        --timesteps "$frames" --seed 1 2>/dev/null | fps)
  used=$(( actors + 2 < cores ? actors + 2 : cores ))
  ratio=$(python3 -c "print($out / $used / $single)")
  printf '%-22s %12.0f %10d %14.2f\n' "launch, $actors actor(s)" "$out" "$used" "$ratio"
done
