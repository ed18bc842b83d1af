"""rlgraph space specs (the JSON the native module gives) as Gymnasium spaces."""

from __future__ import annotations

from typing import Any, Dict

import numpy as np
from gymnasium import spaces


def to_gym(spec: Dict[str, Any]) -> spaces.Space:
    """The Gymnasium space of an rlgraph space spec."""
    kind = spec["type"]
    if kind == "dict":
        return spaces.Dict({k: to_gym(v) for k, v in spec["spec"].items()})
    if kind == "tuple":
        return spaces.Tuple(tuple(to_gym(s) for s in spec["spec"]))
    shape = tuple(spec.get("shape", ()))
    if kind == "bool-box":
        return spaces.MultiBinary(list(shape) or 1)
    if kind == "int-box":
        low, high = spec.get("low"), spec.get("high")
        dtype = np.dtype(spec.get("dtype", "int32"))
        if low is None:
            info = np.iinfo(dtype)
            return spaces.Box(info.min, info.max, shape, dtype)
        if shape == ():
            return spaces.Discrete(high - low, start=low)
        return spaces.Box(low, high - 1, shape, dtype)
    if kind == "float-box":
        low, high = spec.get("low", -np.inf), spec.get("high", np.inf)
        dtype = np.dtype(spec.get("dtype", "float32"))
        as_float = lambda x: np.asarray([float(v) for v in x] if isinstance(x, list) else float(x), dtype)
        low, high = as_float(low), as_float(high)
        return spaces.Box(low.reshape(shape) if low.ndim else low, high.reshape(shape) if high.ndim else high, shape, dtype)
    raise ValueError(f"no Gymnasium space for the rlgraph space {spec}")
