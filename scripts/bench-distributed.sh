#!/usr/bin/env bash
# Ape-X environment frames/s on loopback with 1, 2 and 4 actor processes (one replay shard,
# one learner), against single-process Ape-X with the same config and frames in the same
# run. Each process is one thread, so a run of P processes can use min(P, cores) cores; the
# per-core column divides frames/s by the cores a run can use, against the single process's.
#
# Two modes: "held" keeps the config's updates per frame (actors wait for the learner, the
# default), so the learner's one thread bounds the run as it bounds the single process;
# "free" (--max-frames-ahead 0, as RLgraph's Ape-X on Ray) lets actors run ahead, and the
# learner then does fewer updates per frame.
#
# Each figure is the median of RUNS runs (3 by default): one run of a few seconds on a shared
# machine varies by a quarter.
#
#   scripts/bench-distributed.sh [FRAMES] [CONFIG]      (RLGRAPH_BIN=... runs another build)
set -euo pipefail
cd "$(dirname "$0")/.."
frames=${1:-40000}
config=${2:-configs/apex-cartpole.json}
runs=${RUNS:-3}
cores=$(nproc)
bin=${RLGRAPH_BIN:-target/release/rlgraph}
[ -n "${RLGRAPH_BIN:-}" ] || cargo build --release -q -p rlgraph-cli
figures() {
  python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["env_frames_per_second"], d["updates"] / d["runtime_seconds"])'
}
# The median run (by frames/s) of RUNS runs of the command given.
median() {
  for _ in $(seq "$runs"); do "$@" 2>/dev/null | figures; done | sort -n | sed -n "$(( (runs + 1) / 2 ))p"
}

read -r single single_ups < <(median "$bin" train "$config" --env CartPole-v1 --timesteps "$frames" --seed 1)
printf '%-26s %12s %10s %6s %14s\n' run frames/s updates/s cores per-core-ratio
printf '%-26s %12.0f %10.0f %6d %14.2f\n' single-process "$single" "$single_ups" 1 1.00
for mode in held free; do
  ahead=1000
  [ "$mode" = free ] && ahead=0
  for actors in 1 2 4; do
    read -r fps ups < <(median "$bin" launch "$config" --env CartPole-v1 --actors "$actors" --replay-shards 1 \
          --timesteps "$frames" --seed 1 --max-frames-ahead "$ahead")
    used=$(( actors + 2 < cores ? actors + 2 : cores ))
    ratio=$(python3 -c "print($fps / $used / $single)")
    printf '%-26s %12.0f %10.0f %6d %14.2f\n' "launch, $mode, $actors actor(s)" "$fps" "$ups" "$used" "$ratio"
  done
done

# What the learner input log (--record) costs: the held run with 2 actors, with and without
# recording, alternating in the same loop; the learner's updates/s ratio and the log's bytes
# per frame.
log_dir=$(mktemp -d)
trap 'rm -rf "$log_dir"' EXIT
for _ in $(seq "$runs"); do
  for record in no yes; do
    rm -rf "$log_dir/log"
    args=()
    [ "$record" = yes ] && args=(--record "$log_dir/log")
    "$bin" launch "$config" --env CartPole-v1 --actors 2 --replay-shards 1 --timesteps "$frames" --seed 1 \
      "${args[@]}" 2>/dev/null |
      python3 -c 'import json,sys; d=json.load(sys.stdin); print(sys.argv[1], d["updates"] / d["runtime_seconds"], d["distributed"].get("log_bytes", 0) / d["timesteps_executed"])' "$record"
  done
done > "$log_dir/figures"
python3 - "$log_dir/figures" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
plain = statistics.median(float(u) for r, u, _ in rows if r == "no")
recorded = statistics.median(float(u) for r, u, _ in rows if r == "yes")
per_frame = statistics.median(float(b) for r, _, b in rows if r == "yes")
print(f"{'launch, held, 2, recorded':26s} {'':12s} {recorded:10.0f}   learner updates/s {recorded / plain:.3f}x unrecorded ({plain:.0f}); log {per_frame:.0f} bytes/frame")
PY
