"""rlgraph.ComponentTest from Python, against hand-computed values, on both backends."""

import numpy as np
import pytest

import rlgraph
from rlgraph import _rlgraph

BACKENDS = ["candle", "tch"] if _rlgraph.TCH else ["candle"]
BATCH_OF_3 = {"type": "float-box", "shape": [3], "add_batch_rank": True}


@pytest.mark.parametrize("backend", BACKENDS)
def test_dense_layer_with_given_weights(backend):
    spec = {"type": "dense", "units": 2, "activation": "relu",
            "weights_spec": [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], "biases_spec": [0.5, -0.5]}
    test = rlgraph.ComponentTest(spec, {"inputs": BATCH_OF_3}, backend=backend)
    # [1, 0, -1] @ W = [-4, -4], + b = [-3.5, -4.5], relu: [0, 0];
    # [2, 1, 0] @ W = [5, 8], + b = [5.5, 7.5].
    out = test.test(("call", np.array([[1.0, 0.0, -1.0], [2.0, 1.0, 0.0]])), expected_outputs=[[0.0, 0.0], [5.5, 7.5]])
    assert out.dtype == np.float32
    assert test.variables["dense/kernel"].tolist() == [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_wrong_expectation_fails_and_names_the_method(backend):
    test = rlgraph.ComponentTest({"type": "dense", "units": 1, "weights_spec": 1.0, "biases_spec": 0.0},
                                 {"inputs": BATCH_OF_3}, backend=backend)
    x = np.array([[1.0, 2.0, 3.0]])
    assert test.test(("call", x), expected_outputs=[[6.0]]).tolist() == [[6.0]]
    with pytest.raises(AssertionError, match="call"):
        test.test(("call", x), expected_outputs=[[6.1]])


def test_bad_component_input_is_refused_by_name():
    with pytest.raises(ValueError, match="inputs"):
        rlgraph.ComponentTest({"type": "dense", "units": 1}, {"inputz": BATCH_OF_3})
    test = rlgraph.ComponentTest({"type": "dense", "units": 1}, {"inputs": BATCH_OF_3})
    with pytest.raises(ValueError, match="takes 1 inputs"):
        test.test(("call", [np.ones((1, 3)), np.ones((1, 3))]))
    with pytest.raises(ValueError):
        test.test(("call", np.ones((1, 4))))
