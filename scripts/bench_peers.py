"""Measures the Python peers (EnvPool, cpprb, PyTorch, Stable-Baselines3) on the workloads of
this project's criterion benches and training runs, reads the criterion results of the same
run from target/criterion, and prints tables of both with the ratios.

Run through scripts/bench-peers.sh, which makes the virtual environment, runs the Rust
benches first and builds the `rlgraph` binary. Each hot-path peer figure is the median of
several timed repeats on one thread, as criterion's figures are medians. With `--solve` it
also trains DQN and PPO on CartPole-v1 with this project's shipped configs and with the SB3
zoo's tuned hyperparameters, five seeds each, one thread each side; with `--lunar`, PPO on
LunarLander-v3 the same way (BENCH_LUNAR_SEEDS seeds, default 1); with `--hopper`, PPO on
Hopper-v5 at CleanRL's settings on both sides (BENCH_HOPPER_SEEDS seeds, default 1); with
`--device-ppo`, PPO on 1,024 CPU tensor CartPoles against the same program in JAX
(BENCH_DEVICE_SEEDS seeds, default 3); with `--device-minatar`, PPO on 64 tensor MinAtar
Breakouts against the same PPO compiled whole by JAX over gymnax's MinAtar (BENCH_MINATAR_SEEDS
seeds, default 3; BENCH_MINATAR_FRAMES frames, default 1M; BENCH_MINATAR_TARGET the
last-100 return both race to, default 6); with `--python`, the Python package (`import rlgraph`)
against SB3 on a Gymnasium CartPoleEnv object, against the `rlgraph` program on the native
id, and `make_vec` (native and tensor copies) against EnvPool, which `--make-vec` runs alone;
`--no-micro` skips the hot-path table.
"""

import json
import os
import statistics
import subprocess
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


def cartpole_actions(copies):
    """The actions every CartPole stepping figure uses, on every side: copy i pushes i % 2."""
    return np.arange(copies, dtype=np.int32) % 2


def envpool_cartpole(copies):
    import envpool

    env = envpool.make(
        "CartPole-v1", env_type="gymnasium", num_envs=copies, batch_size=copies, num_threads=1, seed=0
    )
    env.reset()
    actions = cartpole_actions(copies)
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


def pytorch_act():
    """Seconds per greedy action at batch 1 from an MLP 4-64-64-2 (ReLU) in PyTorch, as a
    Python training loop acts: a NumPy state in, no autograd, argmax, the action as an int."""
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Linear(4, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 2)
    )
    state = np.array([0.01, -0.02, 0.03, 0.04], dtype=np.float32)

    def act():
        with torch.no_grad():
            return int(net(torch.as_tensor(state).unsqueeze(0)).argmax(1).item())

    return median_seconds(act, 5000)


# The solve comparison: CartPole-v1 counts as solved at a mean return of 475 over 100
# episodes. "greedy eval" plays 100 fresh episodes with deterministic actions every 2,500
# training steps (Gymnasium's definition, and the SB3 zoo's EvalCallback); "training mean"
# is the mean of the last 100 training episodes. Each run stops at the first step where
# its criterion holds, or at its step budget.
SEEDS = range(5)
EVAL_EVERY = 2500
TARGET = 475.0


def ours_train(*args, python=False):
    """The summary of `target/release/rlgraph train ARGS` (with this Python as RLGRAPH_PYTHON
    where `python`, for the bridge and MuJoCo's library)."""
    binary = os.path.join(ROOT, "target", "release", "rlgraph")
    env = dict(os.environ, RLGRAPH_PYTHON=sys.executable) if python else None
    run = subprocess.run([binary, "train", *args], capture_output=True, text=True, check=True, env=env)
    return json.loads(run.stdout)


def ours_solve(config, timesteps, evaluate):
    """(steps, seconds) to solve, per seed, from `rlgraph train` (seconds include the
    evaluation rounds); steps is None where the budget ran out."""
    out = []
    for seed in SEEDS:
        args = [os.path.join(ROOT, "configs", config), "--env", "CartPole-v1",
                "--timesteps", str(timesteps), "--target-return", str(TARGET), "--seed", str(seed)]
        if evaluate:
            args += ["--eval-every", str(EVAL_EVERY)]
        summary = ours_train(*args)
        out.append((summary["solved_at_timestep"], summary["wall_clock_seconds"]))
    return out


def sb3_solve(algo, timesteps):
    """(steps, seconds) to solve by greedy eval and by training mean, per seed, for the SB3
    zoo's tuned CartPole-v1 hyperparameters. Seconds exclude the evaluation rounds, which
    SB3 plays far more slowly than training would need them."""
    import torch
    from stable_baselines3 import DQN, PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.evaluation import evaluate_policy

    torch.set_num_threads(1)

    class Solved(BaseCallback):
        """Records when each criterion first holds; stops once both do."""

        def __init__(self, eval_env):
            super().__init__()
            self.eval_env, self.start, self.eval_seconds = eval_env, time.perf_counter(), 0.0
            self.by_eval = self.by_training = None
            self.last = 0

        def elapsed(self):
            return time.perf_counter() - self.start - self.eval_seconds

        def _on_step(self):
            steps = self.model.num_timesteps
            buffer = self.model.ep_info_buffer
            if self.by_training is None and len(buffer) == 100 and np.mean([e["r"] for e in buffer]) >= TARGET:
                self.by_training = (steps, self.elapsed())
            if self.by_eval is None and steps // EVAL_EVERY > self.last // EVAL_EVERY:
                began = time.perf_counter()
                mean, _ = evaluate_policy(self.model, self.eval_env, n_eval_episodes=100, deterministic=True)
                self.eval_seconds += time.perf_counter() - began
                if mean >= TARGET:
                    self.by_eval = (steps, self.elapsed())
            self.last = steps
            return self.by_eval is None or self.by_training is None

    by_eval, by_training = [], []
    for seed in SEEDS:
        eval_env = make_vec_env("CartPole-v1", n_envs=100, seed=10_000 + seed)
        if algo == "dqn":
            model = DQN("MlpPolicy", make_vec_env("CartPole-v1", n_envs=1, seed=seed), seed=seed,
                        learning_rate=2.3e-3, batch_size=64, buffer_size=100_000, learning_starts=1000,
                        gamma=0.99, target_update_interval=10, train_freq=256, gradient_steps=128,
                        exploration_fraction=0.16, exploration_final_eps=0.04,
                        policy_kwargs=dict(net_arch=[256, 256]))
        else:
            model = PPO("MlpPolicy", make_vec_env("CartPole-v1", n_envs=8, seed=seed), seed=seed,
                        n_steps=32, batch_size=256, gae_lambda=0.8, gamma=0.98, n_epochs=20, ent_coef=0.0,
                        learning_rate=lambda f: f * 0.001, clip_range=lambda f: f * 0.2)
        callback = Solved(eval_env)
        model.learn(timesteps, callback=callback)
        by_eval.append(callback.by_eval or (None, callback.elapsed()))
        by_training.append(callback.by_training or (None, callback.elapsed()))
    return by_eval, by_training


def solve_cell(runs):
    """Steps and seconds over the seeds: the range, and how many solved."""
    solved = [r for r in runs if r[0] is not None]
    seconds = [r[1] for r in runs]
    if not solved:
        return f"none of {len(runs)} ({min(seconds):.1f}–{max(seconds):.1f} s without)"
    steps = [r[0] for r in solved]
    note = "" if len(solved) == len(runs) else f" ({len(solved)} of {len(runs)})"
    return f"{min(steps):,}–{max(steps):,} steps{note}, {min(seconds):.2f}–{max(seconds):.2f} s"


def solve_ratio(ours, peer):
    """The peer's median seconds over ours, where both solved on every seed."""
    if any(r[0] is None for r in ours + peer):
        return "—"
    return f"{statistics.median(r[1] for r in peer) / statistics.median(r[1] for r in ours):.1f}x"


def solve_table():
    lines = [
        "| CartPole-v1, 5 seeds | criterion | rlgraph-rs | SB3 zoo | ours faster by (median seconds) |",
        "| --- | --- | --- | --- | --- |",
    ]
    rows = (
        ("DQN", "dqn-cartpole.json", "dqn", 50_000, 150_000),
        ("PPO", "ppo-cartpole.json", "ppo", 100_000, 150_000),
    )
    for name, config, algo, eval_budget, training_budget in rows:
        mine_eval = ours_solve(config, eval_budget, True)
        mine_training = ours_solve(config, training_budget, False)
        peer_eval, peer_training = sb3_solve(algo, eval_budget if algo == "dqn" else training_budget)
        lines.append(f"| {name} | greedy eval | {solve_cell(mine_eval)} | {solve_cell(peer_eval)} "
                     f"| {solve_ratio(mine_eval, peer_eval)} |")
        lines.append(f"| {name} | training mean | {solve_cell(mine_training)} | {solve_cell(peer_training)} "
                     f"| {solve_ratio(mine_training, peer_training)} |")
    return "\n".join(lines)


# LunarLander-v3 with PPO at rl-baselines3-zoo's hyperparameters on both sides (16 copies of
# 1,024 steps, minibatches of 64, 4 epochs, gamma 0.999, lambda 0.98, entropy 0.01): solved
# at the first greedy round (20 episodes, every 25,000 steps) with a mean of at least 200.
LUNAR_EVERY = 25_000
LUNAR_EPISODES = 20
LUNAR_TARGET = 200.0
LUNAR_BUDGET = 1_000_000


def ours_lunar(seed):
    """(steps, seconds) to solve LunarLander-v3 with this project's box2d config, on one
    bridge process (seconds include the evaluation rounds)."""
    summary = ours_train(
        os.path.join(ROOT, "configs", "benchmarks", "box2d", "ppo-lunarlander.json"),
        "--env", "gym:LunarLander-v3", "--num-envs", "16", "--bridge-processes", "1",
        "--timesteps", str(LUNAR_BUDGET), "--target-return", str(LUNAR_TARGET), "--seed", str(seed),
        "--eval-every", str(LUNAR_EVERY), "--eval-episodes", str(LUNAR_EPISODES), python=True)
    return summary["solved_at_timestep"], summary["wall_clock_seconds"]


def sb3_lunar(seed):
    """(steps, seconds) to solve LunarLander-v3 with the SB3 zoo's PPO; seconds exclude the
    evaluation rounds."""
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.evaluation import evaluate_policy

    torch.set_num_threads(1)

    class Solved(BaseCallback):
        def __init__(self, eval_env):
            super().__init__()
            self.eval_env, self.start, self.eval_seconds, self.solved = eval_env, time.perf_counter(), 0.0, None

        def _on_step(self):
            steps = self.model.num_timesteps
            if steps // LUNAR_EVERY > (steps - self.training_env.num_envs) // LUNAR_EVERY:
                began = time.perf_counter()
                mean, _ = evaluate_policy(self.model, self.eval_env, n_eval_episodes=LUNAR_EPISODES,
                                          deterministic=True)
                self.eval_seconds += time.perf_counter() - began
                if mean >= LUNAR_TARGET:
                    self.solved = steps
            return self.solved is None

    eval_env = make_vec_env("LunarLander-v3", n_envs=1, seed=10_000 + seed)
    model = PPO("MlpPolicy", make_vec_env("LunarLander-v3", n_envs=16, seed=seed), seed=seed, n_steps=1024,
                batch_size=64, gae_lambda=0.98, gamma=0.999, n_epochs=4, ent_coef=0.01)
    callback = Solved(eval_env)
    model.learn(LUNAR_BUDGET, callback=callback)
    return callback.solved, time.perf_counter() - callback.start - callback.eval_seconds


def python_solve(config, timesteps, env):
    """(steps, seconds) to a greedy 475, per seed, through the Python package (`import
    rlgraph`) on `env`; seconds exclude the evaluation rounds, as SB3's do."""
    import rlgraph

    out = []
    for seed in SEEDS:
        agent = rlgraph.Agent(os.path.join(ROOT, "configs", config), env=env, seed=seed)
        summary = agent.learn(timesteps, eval_every=EVAL_EVERY, eval_episodes=100, target_return=TARGET,
                              progress_bar=False)
        out.append((summary["solved_at_timestep"],
                    summary["wall_clock_seconds"] - summary["evaluation_seconds"]))
    return out


def python_native_solve(config, timesteps):
    """(steps, seconds) per seed through the Python package on the native id, as
    `ours_solve` times the program (evaluation rounds included on both)."""
    import rlgraph

    out = []
    for seed in SEEDS:
        agent = rlgraph.Agent(os.path.join(ROOT, "configs", config), env="CartPole-v1", seed=seed)
        summary = agent.learn(timesteps, eval_every=EVAL_EVERY, target_return=TARGET, eval_episodes=100,
                              progress_bar=False)
        out.append((summary["solved_at_timestep"], summary["wall_clock_seconds"]))
    return out


def python_table():
    """The Python package against SB3 (Python stepping Gymnasium's CartPoleEnv on both sides),
    against the `rlgraph` program (native CartPole on both), and `make_vec` against EnvPool."""
    import rlgraph
    from gymnasium.envs.classic_control import CartPoleEnv
    from gymnasium.wrappers import TimeLimit

    cartpole = lambda: TimeLimit(CartPoleEnv(), 500)  # noqa: E731
    lines = [
        "| CartPole-v1, 5 seeds, greedy eval 475 | rlgraph (Python) | peer | ours faster by (median seconds) |",
        "| --- | --- | --- | --- |",
    ]
    for name, config, algo, budget in (("PPO", "ppo-cartpole.json", "ppo", 150_000),
                                       ("DQN", "dqn-cartpole.json", "dqn", 50_000)):
        mine = python_solve(config, budget, cartpole)
        peer, _ = sb3_solve(algo, budget)
        lines.append(f"| {name}, a Gymnasium `CartPoleEnv` object / SB3 zoo | {solve_cell(mine)} "
                     f"| {solve_cell(peer)} | {solve_ratio(mine, peer)} |")
        native = python_native_solve(config, budget)
        program = ours_solve(config, budget, True)
        lines.append(f"| {name}, the native id / the `rlgraph` program | {solve_cell(native)} "
                     f"| {solve_cell(program)} | {solve_ratio(native, program)} |")
    lines += make_vec_rows()
    return "\n".join(lines)


def make_vec_rows():
    """`rlgraph.envs.make_vec` against EnvPool on 256 CartPoles, one thread, the same actions:
    native copies, and tensor copies on candle's CPU device."""
    import rlgraph

    actions = cartpole_actions(256)
    rate = lambda seconds: 256 / seconds / 1e6  # noqa: E731
    pool = envpool_cartpole(256)
    rows = []
    for name, kwargs in (("`make_vec`", {}), ("`make_vec(tensor=True)`", {"tensor": True})):
        env = rlgraph.envs.make_vec("CartPole-v1", 256, **kwargs)
        env.reset(seed=0)
        mine = median_seconds(lambda: env.step(actions), 500)
        rows.append(f"| CartPole, 256 copies, one thread: {name} / EnvPool | {rate(mine):.2f}M steps/s "
                    f"| {rate(pool):.2f}M steps/s | {pool / mine:.2f}x |")
    return rows


def peer_table(title, peer_name, target, mine, peer):
    """A one-row table of steps and seconds to `target` over the seeds, with the ratio."""
    return "\n".join([
        f"| {title}, {len(mine)} seed(s), one thread each | criterion | rlgraph-rs | {peer_name} "
        "| ours faster by (median seconds) |",
        "| --- | --- | --- | --- | --- |",
        f"| PPO | {target} | {solve_cell(mine)} | {solve_cell(peer)} | {solve_ratio(mine, peer)} |",
    ])


def lunar_table():
    seeds = range(int(os.environ.get("BENCH_LUNAR_SEEDS", "1")))
    mine = [ours_lunar(seed) for seed in seeds]
    peer = [sb3_lunar(seed) for seed in seeds]
    return peer_table("LunarLander-v3 PPO", "SB3 zoo", "greedy eval of 20 episodes >= 200", mine, peer)


# Hopper-v5 with PPO at CleanRL's ppo_continuous_action settings on both sides: this
# project's mujoco config, and SB3's PPO at its defaults (which are those settings: 2,048
# steps, 10 epochs of minibatches of 64, gamma 0.99, lambda 0.95, clip 0.2, gradient norm 0.5)
# with VecNormalize and the learning rate annealed from 3e-4 to 0, as the config has them.
# Solved at the first greedy round (10 episodes, every 20,000 steps) with a mean of at least
# 2,000, the mujoco suite's threshold.
HOPPER_EVERY = 20_000
HOPPER_EPISODES = 10
HOPPER_TARGET = 2000.0
HOPPER_BUDGET = 1_000_000


def ours_hopper(seed):
    """(steps, seconds) to reach the target on Hopper-v5 with the mujoco suite's PPO config,
    one copy of the native task (MuJoCo's library in our process); seconds exclude the
    evaluation rounds, as SB3's do."""
    summary = ours_train(
        os.path.join(ROOT, "configs", "benchmarks", "mujoco", "ppo-hopper.json"), "--env", "Hopper-v5",
        "--timesteps", str(HOPPER_BUDGET), "--target-return", str(HOPPER_TARGET), "--seed", str(seed),
        "--eval-every", str(HOPPER_EVERY), "--eval-episodes", str(HOPPER_EPISODES), python=True)
    return summary["solved_at_timestep"], summary["wall_clock_seconds"] - summary["evaluation_seconds"]


def sb3_hopper(seed):
    """(steps, seconds) to reach the target on Hopper-v5 with SB3's PPO; seconds exclude the
    evaluation rounds."""
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.evaluation import evaluate_policy
    from stable_baselines3.common.vec_env import VecNormalize

    torch.set_num_threads(1)
    train_env = VecNormalize(make_vec_env("Hopper-v5", n_envs=1, seed=seed), clip_obs=10.0, clip_reward=10.0)
    eval_env = VecNormalize(make_vec_env("Hopper-v5", n_envs=1, seed=10_000 + seed), training=False,
                            norm_reward=False)

    class Solved(BaseCallback):
        def __init__(self):
            super().__init__()
            self.start, self.eval_seconds, self.solved = time.perf_counter(), 0.0, None

        def _on_step(self):
            steps = self.model.num_timesteps
            if steps % HOPPER_EVERY == 0:
                began = time.perf_counter()
                eval_env.obs_rms = train_env.obs_rms
                mean, _ = evaluate_policy(self.model, eval_env, n_eval_episodes=HOPPER_EPISODES,
                                          deterministic=True)
                self.eval_seconds += time.perf_counter() - began
                if mean >= HOPPER_TARGET:
                    self.solved = steps
            return self.solved is None

    model = PPO("MlpPolicy", train_env, seed=seed, learning_rate=lambda remaining: 3e-4 * remaining)
    callback = Solved()
    model.learn(HOPPER_BUDGET, callback=callback)
    return callback.solved, time.perf_counter() - callback.start - callback.eval_seconds


def hopper_table():
    seeds = range(1, 1 + int(os.environ.get("BENCH_HOPPER_SEEDS", "1")))
    mine = [ours_hopper(seed) for seed in seeds]
    peer = [sb3_hopper(seed) for seed in seeds]
    return peer_table("Hopper-v5 PPO", "SB3", "greedy eval of 10 episodes >= 2000", mine, peer)


# Device PPO on CPU tensor environments against the JAX program #42 names: the same PPO on the
# same CartPole equations (1,024 copies, 16-step rollouts, 32 minibatches of 2,048), with each
# update compiled into one XLA program, from the peers' folder (BENCH_ANCHORS, default
# ../shared/bench, holding jax_ppo_tensor.py). Ours runs on one thread, XLA on its default
# (every core). Both stop when the mean of the last 100 finished episodes reaches 475.
DEVICE_BUDGET = 2_000_000


def jax_anchor(script, *args):
    """The last JSON line of a JAX anchor from the peers' folder (BENCH_ANCHORS), run with XLA
    on its default threads."""
    anchors = os.environ.get("BENCH_ANCHORS", os.path.join(ROOT, "..", "shared", "bench"))
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "RAYON_NUM_THREADS")}
    run = subprocess.run([sys.executable, os.path.join(anchors, script), *map(str, args)], capture_output=True,
                         text=True, check=True, env=env)
    return json.loads(run.stdout.strip().splitlines()[-1])


def ours_device_ppo(seed):
    """(frames/s, frames to solve, seconds to solve) for `rlgraph train --tensor-envs 1024`."""
    summary = ours_train(os.path.join(ROOT, "configs", "ppo-cartpole-tensor.json"), "--env", "CartPole-v1",
                         "--tensor-envs", "1024", "--timesteps", str(DEVICE_BUDGET), "--target-return", str(TARGET),
                         "--seed", str(seed))
    return summary["env_frames_per_second"], summary["solved_at_timestep"], summary["wall_clock_seconds"]


def jax_device_ppo(seed):
    """(frames/s after compiling, frames to solve, seconds to solve with compiling) for JAX."""
    line = jax_anchor("jax_ppo_tensor.py", seed, DEVICE_BUDGET)
    solved = line.get("solved_mean100") or [None, line["wall_s"]]
    return line["frames_per_s_after_compile"], solved[0], solved[1]


def device_ppo_table():
    seeds = range(int(os.environ.get("BENCH_DEVICE_SEEDS", "3")))
    lines = ["| device PPO, CartPole-v1 as tensors, 1,024 copies, CPU | rlgraph-rs (candle, one thread) "
             "| JAX (one XLA program per update, every core) | ours / JAX frames/s |",
             "| --- | --- | --- | --- |"]
    cell = lambda rate, frames, seconds: (  # noqa: E731
        f"{rate / 1e3:.1f}k frames/s; last-100 mean 475 at "
        + (f"{frames:,} frames, {seconds:.2f} s" if frames else f"not within {DEVICE_BUDGET:,}"))
    for seed in seeds:
        # Alternated per seed, so that a slow spell of the machine falls on both sides.
        mine, jax = ours_device_ppo(seed), jax_device_ppo(seed)
        lines.append(f"| seed {seed} | {cell(*mine)} | {cell(*jax)} (seconds include compiling) "
                     f"| {mine[0] / jax[0]:.2f}x |")
    return "\n".join(lines)


# PPO on tensor MinAtar against the JAX anchor of #66 (../shared/bench/jax_ppo_minatar.py):
# PureJaxRL's settings on both sides (64 copies x 128 steps, 4 epochs of 8 minibatches, 2x64
# ReLU MLPs on the flattened board; ours configs/benchmarks/minatar/ppo-purejaxrl.json), the
# same frames and seeds, both on every core. Seconds to the target include start-up on our
# side and compiling on JAX's (not its imports).
MINATAR_FRAMES = int(float(os.environ.get("BENCH_MINATAR_FRAMES", "1e6")))
MINATAR_TARGET = float(os.environ.get("BENCH_MINATAR_TARGET", "6"))


def ours_minatar_ppo(seed):
    """(frames/s, frames to the target, seconds to the target) for ours, which stops there."""
    config = os.path.join(ROOT, "configs", "benchmarks", "minatar", "ppo-purejaxrl.json")
    summary = ours_train(config, "--env", "MinAtar/Breakout-v1", "--tensor-envs", "64", "--timesteps",
                         str(MINATAR_FRAMES), "--target-return", str(MINATAR_TARGET), "--seed", str(seed),
                         "--threads", "all")
    frames = summary["solved_at_timestep"]
    return summary["env_frames_per_second"], frames, summary["wall_clock_seconds"] if frames else None


def jax_minatar_ppo(seed):
    """(frames/s after compiling, frames to the target, seconds to it with compiling)."""
    line = jax_anchor("jax_ppo_minatar.py", "Breakout-MinAtar", seed, MINATAR_FRAMES, MINATAR_TARGET)
    reached = line.get("reached_target") or [None, None]
    return line["frames_per_s_after_compile"], reached[0], reached[1]


def minatar_table():
    seeds = range(1, 1 + int(os.environ.get("BENCH_MINATAR_SEEDS", "3")))
    lines = [f"| PPO, MinAtar Breakout, 64 copies, {MINATAR_FRAMES:,} frames, CPU | rlgraph-rs (tensor MinAtar, "
             "candle, every core) | JAX over gymnax (one XLA program per update, every core) "
             "| ours / JAX frames/s |", "| --- | --- | --- | --- |"]
    cell = lambda rate, frames, seconds: (  # noqa: E731
        f"{rate / 1e3:.1f}k frames/s; last-100 mean {MINATAR_TARGET:g} at "
        + (f"{frames:,} frames, {seconds:.1f} s" if frames else f"not within {MINATAR_FRAMES:,}"))
    for seed in seeds:
        mine, jax = ours_minatar_ppo(seed), jax_minatar_ppo(seed)
        lines.append(f"| seed {seed} | {cell(*mine)} | {cell(*jax)} | {mine[0] / jax[0]:.2f}x |")
    return "\n".join(lines)


def main():
    if "--no-micro" not in sys.argv[1:]:
        micro_table()
    if "--solve" in sys.argv[1:]:
        print()
        print(solve_table())
    if "--lunar" in sys.argv[1:]:
        print()
        print(lunar_table())
    if "--hopper" in sys.argv[1:]:
        print()
        print(hopper_table())
    if "--device-ppo" in sys.argv[1:]:
        print()
        print(device_ppo_table())
    if "--device-minatar" in sys.argv[1:]:
        print()
        print(minatar_table())
    if "--python" in sys.argv[1:]:
        print()
        print(python_table())
    elif "--make-vec" in sys.argv[1:]:
        print()
        print("\n".join(make_vec_rows()))


def micro_table():
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
    python_act = pytorch_act()
    for side, bench in (("greedy", "agent-greedy"), ("epsilon-greedy", "agent-explore")):
        mine = ours("agent-act", f"tch_{bench}")
        lines.append(
            f"| act at batch 1, MLP 4-64-64-2, tch {side} through the DQN agent / PyTorch in Python "
            f"| {1 / mine / 1e3:.0f}k/s | {1 / python_act / 1e3:.0f}k/s | {python_act / mine:.2f}x |"
        )
    mine = ours("agent-act", "tch_hand-written")
    lines.append(
        f"| act at batch 1, MLP 4-64-64-2, tch hand-written in Rust / PyTorch in Python "
        f"| {1 / mine / 1e3:.0f}k/s | {1 / python_act / 1e3:.0f}k/s | {python_act / mine:.2f}x |"
    )
    print("\n".join(lines))


if __name__ == "__main__":
    main()
