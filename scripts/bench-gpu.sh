#!/usr/bin/env bash
# The GPU side of the benchmarks, in one run on one card: this project's tch backend on CUDA
# (binaries from scripts/build-cuda.sh --benches) beside PyTorch and JAX on the same card.
#
#   scripts/bench-gpu.sh DIST [ANCHORS]
#
# DIST is the folder build-cuda.sh made (target/cuda-VERSION/dist); ANCHORS, if given, a folder
# holding gpu_anchors.py, torch_ppo_tensor.py and jax_ppo_tensor.py (the peers' scripts). Each
# step has its own time limit, so one that hangs costs only its own figures; the most wanted
# figures come first (RLGRAPH_GPU_QUICK=1 leaves out the Atari benches at the end). Prints
# criterion's lines, the CUDA tests' results (the conformance suite one op family per module)
# and one JSON object per peer measurement.
set -uo pipefail
dist="$(cd "${1:?bench-gpu.sh takes the dist folder of scripts/build-cuda.sh}" && pwd)"
anchors="${2:+$(cd "$2" && pwd)}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export RLGRAPH_TEST_DEVICE=cuda:0 PYTHONUNBUFFERED=1
short=(--warm-up-time 1 --measurement-time 3)

step() { printf '\n==> %s (%s)\n' "$*" "$(date +%T)"; }

step "the card and its torch"
nvidia-smi -L
python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.get_device_name(0))'

if [[ -n "$anchors" ]]; then
  step "the device-PPO race: ours (CUDA graphs on and off), PyTorch and JAX, 1,024 copies to solved and 16,384 for frames/s"
  timeout 540 python3 scripts/gpu_race.py "$dist" "$anchors" 0
fi

step "tensor CartPole, tch (CUDA), 1,024 and 1,048,576 copies: one kernel per op, and replayed from a CUDA graph"
RLGRAPH_BENCH_COPIES=1024,1048576 timeout 90 "$dist/run.sh" tensor_envs --bench tensor-tch "${short[@]}"

if [[ -n "$anchors" ]]; then
  for part in A JAX; do
    step "gpu_anchors.py $part"
    timeout 120 python3 "$anchors/gpu_anchors.py" "$part"
  done
fi

step "the CUDA tests: GPU checks, conformance, tensor environments and components with tch on the GPU"
if [[ -x "$dist/integration" ]]; then
  for filter in gpu:: conformance:: tensor_envs components_; do
    timeout 120 "$dist/run.sh" integration "$filter" --test-threads 8 2>&1 | grep -v -E "^test .* ok$|^$" | head -60
  done
fi

step "Nature-DQN forward at batch 1 and 32, tch (CUDA): executor, hand-written, executor replayed from a CUDA graph"
timeout 90 "$dist/run.sh" nature_dqn --bench nature-dqn/tch "${short[@]}"

step "MLP 4-64-64-2 greedy act at batch 1, 256 and 4,096, tch (CUDA): eager and replayed from a CUDA graph (beside gpu_anchors.py B below)"
timeout 120 "$dist/run.sh" mlp_act --bench mlp-act/tch "${short[@]}"

step "PPO on 1,024 tensor CartPoles, tch (CUDA), to a last-100 mean of 475"
timeout 60 "$dist/run.sh" rlgraph train configs/ppo-cartpole-tensor.json --env CartPole-v1 \
  --backend tch --device cuda:0 --tensor-envs 1024 --timesteps 3000000 --target-return 475 --seed 0

if [[ -n "$anchors" ]]; then
  step "PPO anchors: PyTorch eager and JAX (seed 0)"
  timeout 40 python3 "$anchors/torch_ppo_tensor.py" 0
  timeout 40 python3 "$anchors/jax_ppo_tensor.py" 0
  step "gpu_anchors.py B (acting) and C (learning)"
  timeout 60 python3 "$anchors/gpu_anchors.py" B
  timeout 90 python3 "$anchors/gpu_anchors.py" C
fi

if [[ -z "${RLGRAPH_GPU_QUICK:-}" ]]; then
  step "RLgraph's Pong network: PyTorch eager on the GPU (update at batch 32, act at 1-64)"
  timeout 90 python3 scripts/bench_atari.py --device cuda 1
  step "the same through this project's agent and by hand on tch (CUDA)"
  timeout 150 "$dist/run.sh" atari --bench tch "${short[@]}"
fi
step "done"
