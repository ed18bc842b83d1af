"""rlgraph: reinforcement-learning agents from reusable components, with a Rust core.

Train, act, save and load in the words of Stable-Baselines3::

    import rlgraph
    agent = rlgraph.Agent("configs/ppo-cartpole.json", env="CartPole-v1")
    summary = agent.learn(50_000, target_return=475)
    action, _ = agent.predict(observation)
    agent.save("runs/ppo")               # the format of `rlgraph train --out`
    again = rlgraph.Agent.load("runs/ppo")

``env`` is a native id (``"CartPole-v1"``, ``"MinAtar/Breakout-v1"``, ``"gym:LunarLander-v3"``),
a ``gymnasium.Env``, a callable that makes one, or a ``gymnasium.vector.SyncVectorEnv``.
Components are tested from Python with :class:`ComponentTest`; the native environments are a
Gymnasium ``VectorEnv`` through :func:`rlgraph.envs.make_vec`. ``layout="ga3c"`` and
``layout="tensor"`` train with GA3C's threads or device-resident copies; :func:`launch` runs
Ape-X and IMPALA as processes (:func:`replay` runs a recorded learner again); :func:`cli` (and ``python -m rlgraph``) is the ``rlgraph``
program itself.
"""

from rlgraph._rlgraph import ENV_IDS
from rlgraph.agent import Agent, evaluate
from rlgraph.component_test import ComponentTest
from rlgraph.program import cli, launch, replay
from rlgraph import envs

__all__ = ["Agent", "ComponentTest", "ENV_IDS", "cli", "envs", "evaluate", "launch", "replay"]
