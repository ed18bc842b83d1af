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
        # One bound for every element, or one per element (rlgraph writes them flat).
        def bound(x: Any) -> np.ndarray:
            if isinstance(x, list):
                return np.asarray([float(v) for v in x], dtype).reshape(shape)
            return np.full(shape, float(x), dtype)

        return spaces.Box(bound(low), bound(high), shape, dtype)
    raise ValueError(f"no Gymnasium space for the rlgraph space {spec}")
