"""Measures the Python peers (EnvPool, cpprb) on the workloads of this project's criterion
benches, reads the criterion results of the same run from target/criterion, and prints
one table of both with the ratios.

Run through scripts/bench-peers.sh, which makes the virtual environment and runs the Rust
benches first. Each peer figure is the median of several timed repeats on one thread, as
criterion's figures are medians.
"""

import json
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CRITERION = os.path.join(ROOT, "target", "criterion")
CAPACITY = 1_000_000


def median_seconds(run, calls, repeats=7):
    """The median time of one call of `run`, over `repeats` timings of `calls` calls each."""
    for _ in range(max(1, calls // 10)):
        run()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            run()
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times)


def ours(*path):
    """The median of a criterion benchmark of this run, in seconds per iteration."""
    file = os.path.join(CRITERION, *path, "new", "estimates.json")
    try:
        with open(file) as f:
            return json.load(f)["median"]["point_estimate"] * 1e-9
    except OSError:
        sys.exit(f"bench-peers: no criterion result at {file}; run scripts/bench-peers.sh")


def envpool_cartpole(copies):
    import envpool

    env = envpool.make(
        "CartPole-v1", env_type="gymnasium", num_envs=copies, batch_size=copies, num_threads=1, seed=0
    )
    env.reset()
    actions = np.arange(copies, dtype=np.int32) % 2
    return median_seconds(lambda: env.step(actions), 500)


def cpprb_cartpole():
    """cpprb's prioritized buffer holding a million CartPole records, as the Rust bench does:
    seconds per insert, sample and priority update at batch 32 and 256."""
    from cpprb import PrioritizedReplayBuffer

    spec = {
        "obs": {"shape": 4, "dtype": np.float32},
        "act": {"shape": 1, "dtype": np.int32},
        "rew": {"dtype": np.float32},
        "next_obs": {"shape": 4, "dtype": np.float32},
        "done": {"dtype": np.bool_},
    }
    rng = np.random.default_rng(0)
    out = {}
    for batch in (32, 256):
        rb = PrioritizedReplayBuffer(CAPACITY, spec, alpha=0.6)
        records = {
            "obs": rng.standard_normal((batch, 4), dtype=np.float32),
            "act": rng.integers(0, 2, (batch, 1), dtype=np.int32),
            "rew": rng.standard_normal(batch, dtype=np.float32),
            "next_obs": rng.standard_normal((batch, 4), dtype=np.float32),
            "done": rng.integers(0, 2, batch).astype(np.bool_),
        }
        while rb.get_stored_size() < CAPACITY:
            rb.add(**records)
        indices = rng.integers(0, CAPACITY, batch)
        priorities = 0.1 + np.arange(batch, dtype=np.float64)
        out[("insert", batch)] = median_seconds(lambda: rb.add(**records), 2000)
        out[("sample", batch)] = median_seconds(lambda: rb.sample(batch, beta=0.4), 2000)
        out[("update", batch)] = median_seconds(lambda: rb.update_priorities(indices, priorities), 2000)
    return out


def main():
    lines = ["| what | rlgraph-rs | peer | ours is better by |", "| --- | --- | --- | --- |"]

    vector = ours("cartpole-steps", "vector-env", "256")
    plain = ours("cartpole-steps", "plain-loop", "256")
    pool = envpool_cartpole(256)
    rate = lambda seconds: 256 / seconds / 1e6  # noqa: E731
    lines.append(
        f"| CartPole, 256 copies, one thread: `VectorEnv` / EnvPool | {rate(vector):.2f}M steps/s "
        f"| {rate(pool):.2f}M steps/s | {pool / vector:.2f}x |"
    )
    lines.append(
        f"| CartPole, 256 copies, one thread: plain loop / EnvPool | {rate(plain):.2f}M steps/s "
        f"| {rate(pool):.2f}M steps/s | {pool / plain:.2f}x |"
    )

    peer = cpprb_cartpole()
    for op, bench in (("insert", "insert_prioritized"), ("sample", "sample_prioritized"), ("update", "update_prioritized")):
        for batch in (32, 256):
            mine = ours("replay_cartpole", bench, str(batch))
            theirs = peer[(op, batch)]
            lines.append(
                f"| prioritized {op}, batch {batch}, 1M records / cpprb | {mine * 1e6:.2f} µs "
                f"| {theirs * 1e6:.2f} µs | {theirs / mine:.2f}x |"
            )
    print("\n".join(lines))


if __name__ == "__main__":
    main()
