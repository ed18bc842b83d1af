"""Gymnasium environments made for rlgraph's bridge tests (`gym:rlgraph_test_envs:ID`).

The CLI tests run `rlgraph` in this folder; `python -c` puts the working directory on
sys.path, so Gymnasium's `module:ID` form imports this file, which registers the ids.
"""
import gymnasium as gym
import numpy as np
from gymnasium import spaces


class DictObs(gym.Env):
    """A Dict observation (a float vector, a Discrete and a MultiBinary), 2 actions.

    The reward is 1 when the action equals the `target` entry, so a learner can do better
    than chance; episodes last 20 steps.
    """

    def __init__(self):
        self.observation_space = spaces.Dict({
            "position": spaces.Box(-1.0, 1.0, (3,), np.float32),
            "target": spaces.Discrete(2),
            "flags": spaces.MultiBinary(2),
        })
        self.action_space = spaces.Discrete(2)
        self.t = 0

    def _obs(self):
        self.target = int(self.np_random.integers(2))
        return {
            "position": self.np_random.uniform(-1, 1, 3).astype(np.float32),
            "target": self.target,
            "flags": self.np_random.integers(0, 2, 2).astype(np.int8),
        }

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self._obs(), {}

    def step(self, action):
        reward = float(int(action) == self.target)
        self.t += 1
        return self._obs(), reward, False, self.t >= 20, {}


class Float64Obs(gym.Env):
    """A float64 observation, as MuJoCo's are: 4 values, 2 actions, rewarded for matching the
    sign of the first; episodes last 20 steps."""

    observation_space = spaces.Box(-1.0, 1.0, (4,), np.float64)
    action_space = spaces.Discrete(2)

    def _obs(self):
        self.obs = self.np_random.uniform(-1, 1, 4)
        return self.obs

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self._obs(), {}

    def step(self, action):
        reward = float(int(action) == int(self.obs[0] > 0))
        self.t += 1
        return self._obs(), reward, False, self.t >= 20, {}


class TextObs(gym.Env):
    """An observation space rlgraph cannot take (Text inside a Dict)."""

    observation_space = spaces.Dict({"note": spaces.Text(8)})
    action_space = spaces.Discrete(2)


gym.register("DictObs-v0", entry_point=DictObs)
gym.register("Float64Obs-v0", entry_point=Float64Obs)
gym.register("TextObs-v0", entry_point=TextObs)
