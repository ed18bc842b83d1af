"""Runs an exported ONNX model in onnxruntime: `python onnx_outputs.py MODEL FEEDS OUT`.

FEEDS is a JSON object of input name to nested lists (`action_mask` as uint8, every other
input as float32); OUT gets a JSON object of output name to nested lists."""
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
outputs = dict(zip(names, (o.tolist() for o in session.run(None, feeds))))
with open(out_path, "w") as f:
    json.dump(outputs, f)
