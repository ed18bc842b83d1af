"""A user's own Gymnasium environment, registered nowhere: a corridor of 5 cells; action 1
steps right, 0 left; the right end pays 1 and ends the episode; 20 steps at most."""

import gymnasium as gym
import numpy as np


class Corridor(gym.Env):
    def __init__(self, fail_at_step=None, obs_shape=(1,)):
        self.observation_space = gym.spaces.Box(0.0, 1.0, (1,), np.float32)
        self.action_space = gym.spaces.Discrete(2)
        self.at, self.t, self.steps = 0, 0, 0
        self.fail_at_step, self.obs_shape = fail_at_step, obs_shape

    def _obs(self):
        return np.full(self.obs_shape, self.at / 4.0, dtype=np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.at, self.t = 0, 0
        return self._obs(), {}

    def step(self, action):
        self.steps += 1
        if self.fail_at_step is not None and self.steps == self.fail_at_step:
            raise RuntimeError(f"corridor broke at step {self.steps}")
        self.t += 1
        self.at = min(4, self.at + 1) if int(action) == 1 else max(0, self.at - 1)
        terminated = self.at == 4
        return self._obs(), float(terminated), terminated, self.t >= 20, {}
