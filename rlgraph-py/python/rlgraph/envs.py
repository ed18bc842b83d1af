"""The native environments for any Python library: ``make_vec`` gives a Gymnasium
``VectorEnv`` over copies stepped in Rust, one by one (native) or as one tensor program on a
backend's device (tensor)."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np
import gymnasium as gym
from gymnasium.vector.utils import batch_space

from rlgraph._rlgraph import ENV_IDS, TENSOR_ENV_IDS, NativeVectorEnv, TensorVectorEnv
from rlgraph.spaces import to_gym

try:
    from gymnasium.vector import AutoresetMode

    _SAME_STEP: Any = AutoresetMode.SAME_STEP
except ImportError:  # gymnasium < 1.1 names the modes by string
    _SAME_STEP = "SameStep"


def _row(stacked: Any, j: int) -> Any:
    """Row ``j`` of stacked values (arrays, or dicts and tuples of them)."""
    if isinstance(stacked, dict):
        return {k: _row(v, j) for k, v in stacked.items()}
    if isinstance(stacked, tuple):
        return tuple(_row(v, j) for v in stacked)
    return stacked[j]


class RustVectorEnv(gym.vector.VectorEnv):
    """``num_envs`` copies of an environment, stepped in Rust with the GIL released: native
    copies one by one, or tensor copies as one program on a backend's device.

    Autoreset is Gymnasium's same-step mode: a copy whose episode ends starts its next one
    within the same ``step``, which returns the new episode's first observation, with the
    last one in ``info["final_obs"]`` (where ``info["_final_obs"]`` is True).
    """

    metadata = {"autoreset_mode": _SAME_STEP}

    def __init__(self, id: str, num_envs: int, native: Any) -> None:
        self._native = native
        self.num_envs = num_envs
        self.single_observation_space = to_gym(json.loads(self._native.observation_space))
        self.single_action_space = to_gym(json.loads(self._native.action_space))
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.spec = None
        self.id = id
        # The native environments report no per-step info: one shared array of empty dicts.
        self._no_infos = np.array([{} for _ in range(num_envs)] + [None], dtype=object)[:-1]

    def reset(self, *, seed: Optional[Union[int, List[int]]] = None, options: Optional[Dict[str, Any]] = None):
        """Resets every copy; with ``seed``, native copy ``i`` from ``seed + i`` (a list must
        be those consecutive seeds), tensor copies made again from ``seed``."""
        if isinstance(seed, list):
            if seed != list(range(seed[0], seed[0] + len(seed))) or len(seed) != self.num_envs:
                raise ValueError(f"seed: a list must be {self.num_envs} consecutive seeds, got {seed}")
            seed = seed[0]
        return self._native.reset(seed), {}

    def step(self, actions: Any):
        """Steps copy ``i`` with ``actions[i]``."""
        obs, rewards, terminated, truncated, ended, finals = self._native.step(actions)
        info: Dict[str, Any] = {}
        if len(ended):
            mask = np.zeros(self.num_envs, dtype=bool)
            mask[ended] = True
            final_obs = np.empty(self.num_envs, dtype=object)
            rows = finals if isinstance(finals, np.ndarray) else [_row(finals, j) for j in range(len(ended))]
            for i, row in zip(ended.tolist(), rows):
                final_obs[i] = row
            info = {"final_obs": final_obs, "_final_obs": mask, "final_info": self._no_infos, "_final_info": mask}
        return obs, rewards, terminated, truncated, info

    def close_extras(self, **kwargs: Any) -> None:
        pass


def make_vec(
    id: str,
    num_envs: int = 1,
    *,
    threads: bool = False,
    tensor: bool = False,
    backend: str = "candle",
    device: str = "cpu",
    seed: Optional[int] = None,
) -> RustVectorEnv:
    """A Gymnasium ``VectorEnv`` of ``num_envs`` copies of environment ``id``.

    Native copies (``rlgraph.ENV_IDS``: classic control, MuJoCo, MinAtar) step one by one,
    on a thread pool with ``threads``. With ``tensor=True`` the copies are a tensor
    environment (``rlgraph.envs.TENSOR_ENV_IDS``) stepped as one program by ``backend``
    (``"candle"`` or ``"tch"``) on ``device`` (``"cpu"``, ``"cuda:0"``), their start states
    drawn from ``seed`` (0 by default); each step's results come back as numpy arrays. Native
    copies take their seed in ``reset(seed=...)``.
    """
    if not isinstance(id, str):
        raise TypeError(f"id: expected an environment id (str), got {type(id).__name__}")
    if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
        raise ValueError(f"num_envs: expected a whole number >= 1, got {num_envs!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ValueError(f"seed: expected a whole number >= 0, got {seed!r}")
    if tensor:
        if threads:
            raise ValueError("threads: tensor copies step as one program; threads is for native copies")
        return RustVectorEnv(id, num_envs, TensorVectorEnv(id, num_envs, backend, device, seed or 0))
    if backend != "candle" or device != "cpu":
        raise ValueError(f"backend, device: only tensor copies (tensor=True) run on a backend, got {backend!r} on {device!r}")
    if seed is not None:
        raise ValueError("seed: native copies are seeded by reset(seed=...), copy i from seed + i")
    return RustVectorEnv(id, num_envs, NativeVectorEnv(id, num_envs, threads))


__all__ = ["ENV_IDS", "TENSOR_ENV_IDS", "RustVectorEnv", "make_vec"]
