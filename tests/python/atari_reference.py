# Reference frames for rlgraph's Atari tests, computed by Gymnasium, ALE and OpenCV alone.
#
# Usage: python atari_reference.py '<json>' with keys
#   id, make (gymnasium.make kwargs), seed, actions (one int per step),
#   atari_preprocessing (kwargs of gymnasium.wrappers.AtariPreprocessing, or absent),
#   area_resize ([width, height]: also emit cv2.resize(obs, INTER_AREA) of every frame),
#   continue_on_end (after an end, step on without reset: for episodic-life checks).
# Writes one JSON line (frame shape, dtype, per step reward/terminated/truncated/lives), then
# the raw bytes of every observation (the reset one first), then those of the resized ones.
import json
import sys

import ale_py
import cv2
import gymnasium as gym
import numpy as np

gym.register_envs(ale_py)
args = json.loads(sys.argv[1])
env = gym.make(args["id"], **args.get("make", {}))
if args.get("atari_preprocessing") is not None:
    kw = dict(args["atari_preprocessing"])
    if isinstance(kw.get("screen_size"), list):
        kw["screen_size"] = tuple(kw["screen_size"])
    env = gym.wrappers.AtariPreprocessing(env, **kw)
obs, _ = env.reset(seed=args["seed"])
frames, steps = [obs], []
for a in args["actions"]:
    obs, reward, terminated, truncated, _ = env.step(a)
    frames.append(obs)
    steps.append([float(reward), bool(terminated), bool(truncated), int(env.unwrapped.ale.lives())])
    if (terminated or truncated) and not args.get("continue_on_end"):
        break
resized = []
if args.get("area_resize"):
    size = tuple(args["area_resize"])
    resized = [cv2.resize(f, size, interpolation=cv2.INTER_AREA) for f in frames]
head = {"shape": list(frames[0].shape), "dtype": str(frames[0].dtype), "steps": steps,
        "resized_shape": list(resized[0].shape) if resized else None}
out = sys.stdout.buffer
out.write(json.dumps(head).encode() + b"\n")
for f in frames + resized:
    out.write(np.ascontiguousarray(f).tobytes())
out.flush()
