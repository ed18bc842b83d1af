#!/usr/bin/env bash
# Measures this project against its Python peers in one run and prints the ratios:
# `VectorEnv` and a plain loop against EnvPool (CartPole, 256 copies, one thread), the
# prioritized replay (a million CartPole records; insert, sample and priority update at
# batch 32 and 256) against cpprb, acting at batch 1 through the DQN agent on tch against
# PyTorch in Python, and (unless BENCH_SOLVE=0) steps and seconds to solve CartPole-v1 with
# DQN and PPO against Stable-Baselines3's zoo hyperparameters, five seeds each (minutes).
# BENCH_LUNAR=1 adds PPO on LunarLander-v3 through the bridge against SB3's zoo PPO
# (BENCH_LUNAR_SEEDS seeds, default 1; about five minutes a seed for SB3), BENCH_HOPPER=1
# PPO on Hopper-v5 at CleanRL's settings on both sides (BENCH_HOPPER_SEEDS seeds, default 1),
# BENCH_DEVICE_PPO=1 PPO on 1,024 CPU tensor CartPoles against the same program compiled by
# JAX (BENCH_DEVICE_SEEDS seeds, default 3; JAX's script from BENCH_ANCHORS, default
# ../shared/bench), BENCH_PYTHON=1 the Python package (installed into the bench venv with
# `pip install ./rlgraph-py`) against SB3 on a Gymnasium CartPoleEnv object, against the
# program on the native id, and `make_vec` against EnvPool, and BENCH_MICRO=0 skips the
# hot-path benches.
#
# The peers go into the ignored folder .bench-venv/ from PyPI (once), at the versions in
# scripts/bench-peers-requirements.txt; PyTorch's wheel brings about 3 GB of CUDA
# libraries with it (unused: everything runs on one CPU thread). The Rust side is this
# project's criterion benches and the release `rlgraph` binary, run first; the Python side
# is timed right after, on the same machine.
#
# Usage: [BENCH_SOLVE=0] [BENCH_LUNAR=1] [BENCH_HOPPER=1] [BENCH_DEVICE_PPO=1] [BENCH_MICRO=0] scripts/bench-peers.sh [CRITERION_SECONDS]   (per bench, default 3)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds="${1:-3}"

python=$(scripts/install-bench-venv.sh)

# The act benchmark runs on libtorch, fetched once as the test command does.
scripts/install-libtorch.sh
export LIBTORCH="$PWD/.libtorch"
export LD_LIBRARY_PATH="$PWD/.libtorch/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# One thread on each side: the peers are measured on one thread too.
export RAYON_NUM_THREADS=1 OMP_NUM_THREADS=1
criterion=(--measurement-time "$seconds" --warm-up-time 1)
flags=()
if [[ "${BENCH_MICRO:-1}" != 0 ]]; then
  cargo bench -p rlgraph-envs --bench vector_env --locked -- "${criterion[@]}" "/256" >&2
  cargo bench -p rlgraph-memories --bench replay_throughput --locked -- "${criterion[@]}" \
    "replay/cartpole/(insert|sample|update)/prioritized" >&2
  cargo bench -p rlgraph-tests --bench agent_act --locked -- "${criterion[@]}" "tch/" >&2
else
  flags+=(--no-micro)
fi
[[ "${BENCH_SOLVE:-1}" != 0 ]] && flags+=(--solve)
[[ "${BENCH_LUNAR:-0}" != 0 ]] && flags+=(--lunar)
[[ "${BENCH_HOPPER:-0}" != 0 ]] && flags+=(--hopper)
[[ "${BENCH_DEVICE_PPO:-0}" != 0 ]] && flags+=(--device-ppo)
if [[ "${BENCH_PYTHON:-0}" != 0 ]]; then
  flags+=(--python)
  "$python" -m pip install --quiet --disable-pip-version-check ./rlgraph-py >&2
fi
if [[ " ${flags[*]} " =~ " --"(solve|lunar|hopper|device-ppo|python)" " ]]; then
  cargo build --release -p rlgraph-cli --locked >&2
fi
"$python" -W ignore scripts/bench_peers.py "${flags[@]}"
