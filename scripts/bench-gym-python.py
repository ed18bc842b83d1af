"""Python's own per-step time for the environments the bridge bench steps (the baseline of
rlgraph-envs/benches/gym_bridge.rs): run it with the bridge's interpreter,
`.gym-venv/bin/python scripts/bench-gym-python.py`."""
import time

import ale_py
import gymnasium as gym

gym.register_envs(ale_py)


def per_step(env_id, action, steps, **kwargs):
    env = gym.make(env_id, **kwargs)
    env.reset(seed=0)
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(steps):
            _, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                env.reset()
        best = min(best, (time.perf_counter() - start) / steps)
    return best


cartpole = per_step("CartPole-v1", 1, 20000)
pong = per_step("ALE/Pong-v5", 0, 2000)
print(f"CartPole-v1 step in Python: {cartpole * 1e6:.2f} us")
print(f"ALE/Pong-v5 step in Python: {pong * 1e6:.1f} us = {4 / pong:.0f} frames/s (frameskip 4, 1 copy)")
