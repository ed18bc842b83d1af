#!/usr/bin/env bash
# What each role of a distributed Ape-X run costs, measured: one learner, one replay shard and
# ACTORS actor processes on loopback, each under /usr/bin/time, for FRAMES frames. Prints the
# CPU seconds each role spent per frame (actors), per record inserted (the shard) and per
# update (the learner), the basis of a machines estimate for a target frame rate.
#
#   scripts/bench-distributed-costs.sh [CONFIG] [ENV] [FRAMES] [ACTORS] [-- EXTRA SERVE OPTIONS]
#
# Example (Atari through the Gymnasium bridge; scripts/install-gym.sh first):
#   scripts/bench-distributed-costs.sh configs/rlgraph/apex_pong.json \
#       'gym:PongNoFrameskip-v4?frameskip=4&max_num_noops=30' 4000 2
set -euo pipefail
cd "$(dirname "$0")/.."
config=${1:-configs/apex-cartpole.json}
env=${2:-CartPole-v1}
frames=${3:-40000}
actors=${4:-2}
shift $(( $# < 4 ? $# : 4 )); [ "${1:-}" = -- ] && shift
extra=("$@")
bin=${RLGRAPH_BIN:-target/release/rlgraph}
[ -n "${RLGRAPH_BIN:-}" ] || cargo build --release -q -p rlgraph-cli
if [ -z "${RLGRAPH_PYTHON:-}" ] && [ -x .gym-venv/bin/python ]; then export RLGRAPH_PYTHON=$PWD/.gym-venv/bin/python; fi

dir=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$dir"' EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
actor_names=$(python3 -c "import json; print(json.dumps(['a%d' % i for i in range($actors)]))")
echo "{\"learner\": [\"127.0.0.1:$(port)\"], \"replay\": [\"127.0.0.1:$(port)\"], \"actor\": $actor_names}" > "$dir/cluster.json"
serve() {
  local role=$1 index=$2
  shift 2
  /usr/bin/time -f '%U %S %M' -o "$dir/$role-$index.time" "$bin" serve "$config" --env "$env" \
    --cluster "$dir/cluster.json" --role "$role" --index "$index" --timesteps "$frames" --seed 1 "$@"
}
serve replay 0 "${extra[@]}" > /dev/null 2> "$dir/replay.log" &
serve learner 0 "${extra[@]}" > "$dir/summary.json" 2> "$dir/learner.log" &
learner=$!
for i in $(seq 0 $(( actors - 1 ))); do serve actor "$i" "${extra[@]}" > "$dir/actor-$i.json" 2> /dev/null & done
# The learner stops the shard and the actors at the end of the run.
wait

python3 - "$dir" "$actors" <<'PY'
import json, sys, pathlib
d, actors = pathlib.Path(sys.argv[1]), int(sys.argv[2])
def cpu(name):
    user, system, rss = open(d / f"{name}.time").read().split()[-3:]
    return float(user) + float(system), int(rss) // 1024
s = json.load(open(d / "summary.json"))
frames, updates, seconds = s["timesteps_executed"], s["updates"], s["runtime_seconds"]
inserted = sum(x["records_inserted"] for x in s["distributed"]["shards"])
acting = [cpu(f"actor-{i}") for i in range(actors)]
actor_cpu = sum(c for c, _ in acting)
shard_cpu, shard_mib = cpu("replay-0")
learner_cpu, learner_mib = cpu("learner-0")
print(f"frames {frames}, updates {updates}, records inserted {inserted}, {seconds:.1f} s, {frames / seconds:.0f} frames/s")
print(f"actors : {1e6 * actor_cpu / frames:9.1f} CPU-us per frame     ({frames / actor_cpu:8.0f} frames/s per actor core; largest {max(m for _, m in acting)} MiB)")
print(f"shard  : {1e6 * shard_cpu / max(inserted, 1):9.1f} CPU-us per record    ({max(inserted, 1) / shard_cpu:8.0f} records/s per core, sampling included; {shard_mib} MiB)")
print(f"learner: {1e3 * learner_cpu / max(updates, 1):9.3f} CPU-ms per update    ({learner_mib} MiB)")
if "log_bytes" in s["distributed"]:
    print(f"log    : {s['distributed']['log_bytes'] / frames:9.1f} bytes per frame ({s['distributed']['log_bytes'] / max(updates, 1):.0f} per update; --record)")
PY
