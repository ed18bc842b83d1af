"""Runs an exported ONNX model in onnxruntime: `python onnx_outputs.py MODEL FEEDS OUT`.

FEEDS is a JSON object of input name to nested lists (`action_mask` as uint8, every other
input as float32); OUT gets a JSON object of output name to nested lists. A recurrent model
(inputs `memory_c` and `memory_h`) reads the rows as one episode: one row per run, from zero
memories, each run's `memory_*_out` fed back in."""
import json
import sys

import numpy as np
import onnxruntime

model, feeds_path, out_path = sys.argv[1:4]
session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
with open(feeds_path) as f:
    feeds = json.load(f)
feeds = {k: np.asarray(v, dtype=np.uint8 if k == "action_mask" else np.float32) for k, v in feeds.items()}
names = [o.name for o in session.get_outputs()]
inputs = {i.name: i for i in session.get_inputs()}
if "memory_c" in inputs:
    units = inputs["memory_c"].shape[1]
    memory = {"memory_c": np.zeros((1, units), np.float32), "memory_h": np.zeros((1, units), np.float32)}
    rows = {name: [] for name in names}
    for r in range(len(feeds["states"])):
        step = {k: v[r : r + 1] for k, v in feeds.items()}
        out = dict(zip(names, session.run(None, {**step, **memory})))
        memory = {"memory_c": out["memory_c_out"], "memory_h": out["memory_h_out"]}
        for name in names:
            rows[name].append(out[name][0].tolist())
    outputs = rows
else:
    outputs = dict(zip(names, (o.tolist() for o in session.run(None, feeds))))
with open(out_path, "w") as f:
    json.dump(outputs, f)
