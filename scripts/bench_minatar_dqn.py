"""The MinAtar DQN race: the reference's own PyTorch DQN (`examples/dqn.py` of a MinAtar
checkout, given with --reference) against `rlgraph train` with the `minatar` suite's config,
on the same game for the same frames, one thread each, back to back.

Both sides keep the reference's absolute schedule: learning from frame 5,000, epsilon from 1.0
to 0.1 over the next 100,000 frames (ours gets the shares of a shorter budget that say so).
Each side prints its frames per second (wall clock, start-up included), and the mean of the
last 100 training returns (the reference's measure), with the ratio of the rates.

    git clone https://github.com/kenjyoung/MinAtar   # or any checkout of it
    .bench-venv/bin/python scripts/bench_minatar_dqn.py --reference MinAtar/examples/dqn.py \
        [--game breakout] [--frames 500000] [--seed 0]

The reference is GPL-licensed and is not copied here: it is imported from the checkout, its
NUM_FRAMES set to the budget. `rlgraph` is target/release/rlgraph (cargo build --release).
"""

import argparse
import csv
import importlib.util
import json
import os
import random
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GAMES = {
    "asterix": "Asterix",
    "breakout": "Breakout",
    "freeway": "Freeway",
    "seaquest": "Seaquest",
    "space_invaders": "SpaceInvaders",
}
WARM_UP = 5_000
ANNEAL = 100_000


def reference(path, game, frames, seed):
    """(seconds, episode returns) of the reference's dqn() on `game` for `frames` frames."""
    import numpy as np
    import torch
    from minatar import Environment

    torch.set_num_threads(1)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    spec = importlib.util.spec_from_file_location("minatar_reference_dqn", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.NUM_FRAMES = frames
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        env = Environment(game)
        env.seed(seed)
        module.dqn(env, False, False, os.path.join(out, game))
        seconds = time.perf_counter() - start
        data = torch.load(os.path.join(out, game + "_data_and_weights"), weights_only=False)
    return seconds, [float(g) for g in data["returns"]]


def ours(game, frames, seed):
    """(seconds, episode returns) of `rlgraph train` with the suite's DQN config, its
    epsilon shares set for `frames` so the schedule is the reference's in frames."""
    with open(os.path.join(ROOT, "configs", "benchmarks", "minatar", "dqn-2m.json")) as f:
        config = json.load(f)
    decay = config["exploration_spec"]["epsilon_spec"]["decay_spec"]
    decay["start_time_percentage"] = WARM_UP / frames
    decay["end_time_percentage"] = (WARM_UP + ANNEAL) / frames
    binary = os.path.join(ROOT, "target", "release", "rlgraph")
    with tempfile.TemporaryDirectory() as out:
        path = os.path.join(out, "config.json")
        with open(path, "w") as f:
            json.dump(config, f)
        args = [binary, "train", path, "--env", f"MinAtar/{GAMES[game]}-v0", "--timesteps", str(frames),
                "--seed", str(seed), "--threads", "1", "--out", os.path.join(out, "run")]
        start = time.perf_counter()
        subprocess.run(args, check=True, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        with open(os.path.join(out, "run", "episodes.csv")) as f:
            returns = [float(row["return"]) for row in csv.DictReader(f)]
    return seconds, returns


def last_100(returns):
    tail = returns[-100:]
    return sum(tail) / max(len(tail), 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reference", required=True, help="the path of MinAtar's examples/dqn.py")
    parser.add_argument("--game", default="breakout", choices=sorted(GAMES))
    parser.add_argument("--frames", type=int, default=500_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.frames <= WARM_UP + ANNEAL:
        sys.exit(f"--frames: must exceed the warm-up and the annealing ({WARM_UP + ANNEAL})")
    mine = ours(args.game, args.frames, args.seed)
    theirs = reference(args.reference, args.game, args.frames, args.seed)
    rate = lambda run: args.frames / run[0]  # noqa: E731
    print(f"| MinAtar {args.game}, DQN, {args.frames:,} frames, seed {args.seed}, one thread | frames/s "
          "| seconds | episodes | last-100 training mean |")
    print("| --- | --- | --- | --- | --- |")
    for name, run in (("rlgraph-rs", mine), ("the reference (PyTorch)", theirs)):
        print(f"| {name} | {rate(run):,.0f} | {run[0]:,.1f} | {len(run[1])} | {last_100(run[1]):.2f} |")
    print(f"\nours faster by {rate(mine) / rate(theirs):.2f}x")


if __name__ == "__main__":
    main()
