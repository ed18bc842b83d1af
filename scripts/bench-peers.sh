#!/usr/bin/env bash
# Measures this project against its Python peers in one run and prints the ratios:
# `VectorEnv` and a plain loop against EnvPool (CartPole, 256 copies, one thread), and the
# prioritized replay (a million CartPole records; insert, sample and priority update at
# batch 32 and 256) against cpprb.
#
# The peers go into the ignored folder .bench-venv/ from PyPI (once), at the versions in
# scripts/bench-peers-requirements.txt. The Rust side is this project's criterion benches,
# run first; the Python side is timed right after, on the same machine.
#
# Usage: scripts/bench-peers.sh [CRITERION_SECONDS]   (measurement time per bench, default 3)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds="${1:-3}"

venv="$PWD/.bench-venv"
requirements="scripts/bench-peers-requirements.txt"
stamp="$venv/.installed-requirements"
if ! [[ -x "$venv/bin/python" && -f "$stamp" ]] || ! cmp -s "$stamp" "$requirements"; then
  echo "bench-peers: installing the peers into $venv (from PyPI, once)" >&2
  rm -rf "$venv"
  "${PYTHON:-python3}" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements" >&2
  cp "$requirements" "$stamp"
fi

# One thread on each side: the peers are measured on one thread too.
export RAYON_NUM_THREADS=1 OMP_NUM_THREADS=1
criterion=(--measurement-time "$seconds" --warm-up-time 1)
cargo bench -p rlgraph-envs --bench vector_env --locked -- "${criterion[@]}" "/256" >&2
cargo bench -p rlgraph-memories --bench replay_throughput --locked -- "${criterion[@]}" \
  "replay/cartpole/(insert|sample|update)/prioritized" >&2
"$venv/bin/python" -W ignore scripts/bench_peers.py
