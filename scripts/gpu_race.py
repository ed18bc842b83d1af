#!/usr/bin/env python3
"""The device-PPO race on one card, in one call: this project's PPO on tensor CartPoles
(`rlgraph train --tensor-envs`, CUDA graphs on and off) beside the PyTorch and JAX anchors
(torch_ppo_tensor.py, jax_ppo_tensor.py: the same environment and PPO settings), at 1,024
copies to a solved CartPole and at 16,384 copies for frames per second. Prints one line per
run as it finishes, then one table with the card's name.

    scripts/gpu_race.py DIST ANCHORS [SEED]

DIST is the folder scripts/build-cuda.sh made (its run.sh runs our binaries on this machine's
torch); ANCHORS holds the anchors' scripts. Every time is wall-clock from the process's start
(start-up, libtorch's or XLA's initialisation and compiling included) to the moment the last
100 finished episodes' mean reached 475, as each side measures it; the anchors' greedy rounds
are left out, as they report.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def timed(cmd, timeout, env=None):
    """Runs cmd; returns (wall seconds, the last JSON object it printed or None, its output)."""
    start = time.perf_counter()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)
        out = done.stdout + done.stderr
    except subprocess.TimeoutExpired as e:
        out = f"timed out after {timeout} s\n" + (e.stdout or b"").decode(errors="replace")[-2000:]
    wall = time.perf_counter() - start
    found = None
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                found = json.loads(line)
            except json.JSONDecodeError:
                pass
    return wall, found, out


def anchor_copy(path, copies, tmp):
    """A copy of an anchor script whose solve time counts from the process's start and whose
    copy count is `copies` (the anchors fix 1,024)."""
    src = open(path).read()
    src = src.replace('"""\nimport', '"""\nimport time as _race_t\n_RACE_T0 = _race_t.perf_counter()\nimport', 1)
    for old in ("N, T, MB, ITERS = 1024, 16, 2048, 32",):
        src = src.replace(old, old.replace("1024", str(copies)), 1)
    src = src.replace(
        "solved_mean = (frames, round(time.perf_counter() - t0 - eval_s, 2))",
        "solved_mean = (frames, round(time.perf_counter() - t0 - eval_s, 2), round(_race_t.perf_counter() - _RACE_T0 - eval_s, 2))",
    )
    out = os.path.join(tmp, f"{copies}-{os.path.basename(path)}")
    open(out, "w").write(src)
    return out


def ours(dist, copies, seed, graphs, timesteps, solve):
    config = os.path.join(ROOT, "configs/ppo-cartpole-tensor.json")
    if copies != 1024:
        spec = json.load(open(config))
        # The anchors' shape at any copy count: 16-step rollouts, 32 minibatches of 2,048.
        spec["update_spec"].update(batch_size=16 * copies, update_interval=16 * copies)
        spec["memory_spec"]["capacity"] = 16 * copies
        config = os.path.join(tempfile.gettempdir(), f"ppo-cartpole-tensor-{copies}.json")
        json.dump(spec, open(config, "w"))
    # rlgraph-tch itself where it is there: `rlgraph` hands a tch run to it anyway.
    program = "rlgraph-tch" if os.path.exists(os.path.join(dist, "rlgraph-tch")) else "rlgraph"
    cmd = [os.path.join(dist, "run.sh"), program, "train", config, "--env", "CartPole-v1", "--backend", "tch",
           "--device", "cuda:0", "--tensor-envs", str(copies), "--timesteps", str(timesteps), "--seed", str(seed),
           "--cuda-graphs", graphs]
    if solve:
        cmd += ["--target-return", "475"]
    wall, s, out = timed(cmd, 120)
    if not s:
        return {"who": f"rlgraph-rs tch, CUDA graphs {graphs}", "copies": copies, "error": out[-1500:]}
    frames = s.get("timesteps_executed")
    return {
        "who": f"rlgraph-rs tch, CUDA graphs {graphs}",
        "copies": copies,
        "solved_frames": s.get("solved_at_timestep"),
        "solved_s": round(wall, 2) if s.get("solved_at_timestep") else None,
        "frames": frames,
        "process_s": round(wall, 2),
        "frames_per_s": s.get("env_frames_per_second"),
        "recorded": [s.get("recorded_rollouts"), s.get("recorded_updates")],
    }


def anchor(name, path, copies, seed, budget, tmp):
    script = anchor_copy(path, copies, tmp)
    env = dict(os.environ, XLA_PYTHON_CLIENT_PREALLOCATE="false")
    wall, s, out = timed([sys.executable, script, str(seed), str(budget)], 240, env)
    if not s:
        return {"who": name, "copies": copies, "error": out[-1500:]}
    solved = s.get("solved_mean100")
    return {
        "who": name,
        "copies": copies,
        "solved_frames": solved[0] if solved else None,
        "solved_s": solved[2] if solved and len(solved) > 2 else None,
        "frames": s.get("frames"),
        "process_s": round(wall, 2),
        "frames_per_s": s.get("frames_per_s_after_compile", s.get("frames_per_s")),
        "compile_s": s.get("compile_s"),
    }


def main():
    dist, anchors = sys.argv[1], sys.argv[2]
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    import torch

    card = torch.cuda.get_device_name(0)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        plan = [
            lambda: ours(dist, 1024, seed, "on", 3_000_000, True),
            lambda: ours(dist, 1024, seed, "off", 3_000_000, True),
            lambda: anchor("JAX (one XLA program per update)", os.path.join(anchors, "jax_ppo_tensor.py"), 1024, seed, 4_000_000, tmp),
            lambda: anchor("PyTorch eager", os.path.join(anchors, "torch_ppo_tensor.py"), 1024, seed, 3_000_000, tmp),
            lambda: ours(dist, 16384, seed, "on", 16 * 16384 * 12, False),
            lambda: anchor("JAX (one XLA program per update)", os.path.join(anchors, "jax_ppo_tensor.py"), 16384, seed, 16 * 16384 * 12, tmp),
        ]
        for step in plan:
            row = step()
            rows.append(row)
            print(json.dumps(row), flush=True)
    print(f"\nDevice PPO on tensor CartPole-v1, {card}, seed {seed}, {time.strftime('%Y-%m-%d')}")
    print("| who | copies | solved at (frames) | to solved, s (from process start) | process, s | frames/s |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        if "error" in r:
            print(f"| {r['who']} | {r['copies']} | failed | | | |")
            continue
        fps = r.get("frames_per_s")
        print(f"| {r['who']} | {r['copies']:,} | {r.get('solved_frames') or '-'} | {r.get('solved_s') or '-'} | "
              f"{r['process_s']} | {f'{fps:,.0f}' if fps else '-'} |")


if __name__ == "__main__":
    main()
