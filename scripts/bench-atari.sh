#!/usr/bin/env bash
# RLgraph's Pong experiments (its paper's Figs. 4b, 5 and 6a) on this machine's CPU, with
# PyTorch measured in the same run, and a table of the figures and ratios at the end:
#
#   1. the DQN update of dqn_agent_for_pong.json at batch 32, and greedy acting against the
#      batch size, through the agent on candle and tch, hand-written on each backend, and in
#      PyTorch (scripts/bench_atari.py), on 1 and 2 threads (criterion bench `atari`);
#   2. acting on tch beside two busy processes, with no thread variable set;
#   3. one worker's frames/s on Pong against the number of environment copies (`rlgraph
#      train`, before updates start, so acting, stepping and storing);
#   4. bytes per stored transition (resident memory of a filled replay over its capacity) and
#      per record on the wire: bytes stored once, float frames stored once, and the float
#      stacks stored whole of the layout before;
#   5. Ape-X on Pong with `rlgraph launch`, 1 and 2 actors: frames/s.
#
# Set-up is the script's: libtorch (.libtorch/), Gymnasium with the Atari ROMs (.gym-venv/)
# and PyTorch (.bench-venv/, shared with scripts/bench-peers.sh), all from PyPI, once.
#
#   scripts/bench-atari.sh [CRITERION_SECONDS]   (per bench, default 3)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds="${1:-3}"
# The raw outputs stay in target/bench-atari/ for a second look.
out=target/bench-atari
rm -rf "$out" && mkdir -p "$out"

python=$(scripts/install-bench-venv.sh)
scripts/install-libtorch.sh
export RLGRAPH_PYTHON="$(scripts/install-gym.sh)"
export LIBTORCH="$PWD/.libtorch"
export LD_LIBRARY_PATH="$PWD/.libtorch/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# No thread variable: the project's own defaults are what is measured.
unset RLGRAPH_THREADS RAYON_NUM_THREADS CANDLE_NUM_THREADS OMP_NUM_THREADS MKL_NUM_THREADS

cargo build --release --locked -q -p rlgraph-cli --features tch
cargo build --release --locked -q -p executors --example atari_bytes
cargo bench --locked -q -p rlgraph-tests --bench atari --no-run
bench=$(ls -t target/release/deps/atari-* | grep -v '\.d$' | head -1)
bin=target/release/rlgraph
pong="gym:PongNoFrameskip-v4?frameskip=4&max_num_noops=30"

echo "== 1. update and act: criterion (Rust) and PyTorch, 1 and 2 threads" >&2
for t in 1 2; do
  RLGRAPH_THREADS=$t "$bench" --bench --measurement-time "$seconds" --warm-up-time 1 >"$out/criterion-$t.txt" 2>/dev/null || true
done
"$python" -W ignore scripts/bench_atari.py 1 2 >"$out/pytorch.jsonl"

echo "== 2. tch acting beside two busy processes, no variable set" >&2
busy() { python3 -c 'while True: pass' & }
busy; b1=$!; busy; b2=$!
"$bench" --bench 'atari/act/tch/agent/1$' --measurement-time "$seconds" --warm-up-time 1 >"$out/loaded.txt" 2>/dev/null || true
kill "$b1" "$b2"

echo "== 3. frames/s against environment copies (Pong, acting and storing)" >&2
for n in 1 2 4 8; do
  "$bin" train configs/rlgraph/dqn_agent_for_pong.json --env "$pong" --num-envs "$n" --timesteps 2000 --seed 1 \
    2>/dev/null | tail -1 | python3 -c "import json,sys; d=json.load(sys.stdin); print($n, d['env_frames_per_second'])" \
    >>"$out/copies.txt"
done

echo "== 4. bytes per transition" >&2
for config in dqn_agent_for_pong apex_pong; do
  for storage in uint8 float32 plain; do
    target/release/examples/atari_bytes "$storage" 20000 "configs/rlgraph/$config.json" >>"$out/bytes.jsonl"
  done
done

echo "== 5. Ape-X on Pong with rlgraph launch" >&2
for actors in 1 2; do
  "$bin" launch configs/rlgraph/apex_pong.json --env "$pong" --actors "$actors" --replay-shards 1 \
    --timesteps 3000 --seed 1 2>/dev/null | tail -1 \
    | python3 -c "import json,sys; d=json.load(sys.stdin); print($actors, d['env_frames_per_second'], d['updates'])" \
    >>"$out/apex.txt"
done

python3 - "$out" <<'PY'
import json, re, sys
out = sys.argv[1]
unit = {"ns": 1e-6, "µs": 1e-3, "us": 1e-3, "ms": 1.0, "s": 1e3}
# A criterion line names the bench, then (on the same line or the next) its time's interval.
timed = re.compile(r"^(atari/\S+)\s+time:\s+\[\S+ \S+ (\S+) (\S+)", re.M)
rust = {}
for t in (1, 2):
    for m in timed.finditer(open(f"{out}/criterion-{t}.txt").read()):
        rust[(t, m[1])] = float(m[2]) * unit[m[3]]
torch = {(r["threads"], r["what"], r["batch"]): r["ms"] for r in map(json.loads, open(f"{out}/pytorch.jsonl"))}
print("\n| threads | what | candle | tch | hand-written candle / tch | PyTorch | candle / PyTorch | tch / PyTorch |")
print("|---|---|---|---|---|---|---|---|")
for t in (1, 2):
    for what, batch in [("update", 32)] + [("act", n) for n in (1, 4, 16, 64)]:
        key = f"atari/{what}/{{}}/{{}}" + ("" if what == "update" else f"/{batch}")
        c, tc = rust.get((t, key.format("candle", "agent"))), rust.get((t, key.format("tch", "agent")))
        hc, ht = rust.get((t, key.format("candle", "hand-written"))), rust.get((t, key.format("tch", "hand-written")))
        p = torch.get((t, what, batch))
        f = lambda x: "-" if x is None else f"{x:.2f} ms"
        r = lambda x: "-" if x is None or p is None else f"{x / p:.2f}"
        print(f"| {t} | {what} batch {batch} | {f(c)} | {f(tc)} | {f(hc)} / {f(ht)} | {f(p)} | {r(c)} | {r(tc)} |")
for m in timed.finditer(open(f"{out}/loaded.txt").read()):
    print(f"\ntch act at batch 1 beside two busy processes, no variable set: {float(m[2]) * unit[m[3]]:.2f} ms")
print("\n| environment copies | Pong frames/s |\n|---|---|")
for line in open(f"{out}/copies.txt"):
    n, fps = line.split()
    print(f"| {n} | {float(fps):.0f} |")
print("\n| config | storage | bytes per stored transition (RSS) | bytes per record on the wire |\n|---|---|---|---|")
for r in map(json.loads, open(f"{out}/bytes.jsonl")):
    print(f"| {r['config'].split('/')[-1]} | {r['frame_storage']} | {r['rss_bytes_per_transition']:.0f} | {r['wire_bytes_per_record']:.0f} |")
print("\n| Ape-X actors | frames/s | updates |\n|---|---|---|")
for line in open(f"{out}/apex.txt"):
    a, fps, ups = line.split()
    print(f"| {a} | {float(fps):.0f} | {ups} |")
PY
