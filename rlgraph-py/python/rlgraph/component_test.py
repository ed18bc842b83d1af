"""``rlgraph.ComponentTest``: one component built alone and called with numpy values, as
RLgraph's ``ComponentTest`` was used."""

from __future__ import annotations

import json
from typing import Any, Dict, Optional, Sequence, Tuple, Union

import numpy as np

from rlgraph._rlgraph import NativeComponentTest

SpaceSpec = Union[str, Dict[str, Any]]


def _assert_close(got: Any, expected: Any, decimals: int, at: str) -> None:
    if isinstance(expected, dict):
        if not isinstance(got, dict) or set(got) != set(expected):
            raise AssertionError(f"{at}: expected the keys {sorted(expected)}, got {got!r}")
        for k in expected:
            _assert_close(got[k], expected[k], decimals, f"{at}[{k!r}]")
    elif isinstance(expected, (tuple, list)) and isinstance(got, tuple):
        if len(got) != len(expected):
            raise AssertionError(f"{at}: expected {len(expected)} items, got {len(got)}")
        for i, (g, e) in enumerate(zip(got, expected)):
            _assert_close(g, e, decimals, f"{at}[{i}]")
    else:
        np.testing.assert_allclose(np.asarray(got, dtype=np.float64), np.asarray(expected, dtype=np.float64),
                                   rtol=0, atol=1.5 * 10.0 ** -decimals, err_msg=at)


class ComponentTest:
    """A component (an RLgraph component spec, such as ``{"type": "dense", "units": 2}``)
    built alone from the spaces of its API methods' parameters.

    Args:
        component: the component's spec (a dict).
        input_spaces: parameter name to rlgraph space spec, for example
            ``{"inputs": {"type": "float-box", "shape": [3], "add_batch_rank": True}}`` or
            ``{"inputs": "float32"}``.
        backend: ``"candle"`` or ``"tch"``.
        seed: the seed its variables are initialised from.
    """

    def __init__(self, component: Dict[str, Any], input_spaces: Dict[str, SpaceSpec], *,
                 backend: str = "candle", seed: int = 0) -> None:
        if not isinstance(component, dict):
            raise TypeError(f"component: expected a spec dict, got {type(component).__name__}")
        if not isinstance(input_spaces, dict):
            raise TypeError(f"input_spaces: expected a dict of parameter name to space spec, got {type(input_spaces).__name__}")
        self._native = NativeComponentTest(json.dumps(component), json.dumps(input_spaces), backend, seed)

    def test(self, call: Tuple[str, Any], expected_outputs: Any = None, decimals: int = 5) -> Any:
        """Calls ``call = (api_method, inputs)`` (``inputs`` one value, or a list or tuple
        with one per parameter) and returns its output (a tuple where there are several).
        With ``expected_outputs``, asserts the outputs equal them to ``decimals`` places."""
        method, inputs = call
        if not isinstance(inputs, (list, tuple)):
            inputs = [inputs]
        outputs = self._native.call(method, list(inputs))
        out = outputs[0] if len(outputs) == 1 else tuple(outputs)
        if expected_outputs is not None:
            _assert_close(out, expected_outputs, decimals, method)
        return out

    @property
    def variables(self) -> Dict[str, np.ndarray]:
        """Every variable, by scope path."""
        return self._native.variables()
